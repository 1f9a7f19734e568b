/* png.h — the smallest PNG writer that a picture of the report needs (png.c):
 * 8-bit RGB, no compression, no dependency. */
#ifndef UNBLOCK_PNG_H
#define UNBLOCK_PNG_H

/* Writes the w x h image `rgb` (rows top to bottom, 3 bytes a pixel) to `path`.
 * Returns 0, or -1 with errno set (the file may then be partly written). */
int unblock_png_write(const char *path, const unsigned char *rgb, unsigned w, unsigned h);

#endif
