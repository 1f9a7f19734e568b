/* png.c — writes an 8-bit RGB PNG (png.h), as the PNG specification (ISO/IEC
 * 15948, RFC 2083) and zlib's (RFC 1950, 1951) allow at their simplest:
 *   signature; IHDR (width, height, depth 8, colour type 2 = RGB, no interlace);
 *   one IDAT holding a zlib stream whose deflate blocks are all "stored" (type 0,
 *   at most 65535 bytes each, no compression: a chart of a few hundred KiB needs
 *   none, and zlib is not a dependency of the launcher); IEND.
 * Each row of the image data starts with filter byte 0 (none).  Each chunk ends
 * with the CRC-32 of its type and data; the zlib stream with the Adler-32 of the
 * image data. */
#define _GNU_SOURCE
#include "png.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STORED_MAX 65535u /* bytes in one stored deflate block */

/* CRC-32 as PNG uses it (polynomial 0xedb88320, reflected; RFC 2083, 15). */
static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n)
{
    static uint32_t table[256];
    if (table[1] == 0)
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
    for (size_t i = 0; i < n; i++)
        crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return crc;
}

static void put32(unsigned char *b, uint32_t v)
{
    b[0] = (unsigned char)(v >> 24);
    b[1] = (unsigned char)(v >> 16);
    b[2] = (unsigned char)(v >> 8);
    b[3] = (unsigned char)v;
}

/* One chunk: length, type, data, CRC-32 of type and data. */
static int chunk(FILE *f, const char *type, const unsigned char *data, size_t len)
{
    unsigned char head[8], tail[4];
    put32(head, (uint32_t)len);
    memcpy(head + 4, type, 4);
    uint32_t crc = crc32_update(0xffffffffu, head + 4, 4);
    crc = crc32_update(crc, data, len) ^ 0xffffffffu;
    put32(tail, crc);
    return fwrite(head, 1, 8, f) == 8 && fwrite(data, 1, len, f) == len &&
                   fwrite(tail, 1, 4, f) == 4
               ? 0
               : -1;
}

int unblock_png_write(const char *path, const unsigned char *rgb, unsigned w, unsigned h)
{
    if (w == 0 || h == 0 || w > (1u << 24) / 3) {
        errno = EINVAL;
        return -1;
    }
    size_t row = 1 + (size_t)w * 3, raw = row * h;
    size_t blocks = (raw + STORED_MAX - 1) / STORED_MAX;
    size_t zlen = 2 + raw + 5 * blocks + 4;
    unsigned char *z = malloc(zlen), *p = z;
    if (!z)
        return -1;
    /* zlib header: deflate, 32 KiB window (0x78); no dictionary, and the check
     * bits that make 0x7801 a multiple of 31. */
    *p++ = 0x78;
    *p++ = 0x01;
    uint32_t a = 1, b = 0; /* Adler-32 of the uncompressed data (RFC 1950) */
    size_t done = 0, in_block = 0;
    for (unsigned y = 0; y < h; y++)
        for (size_t x = 0; x < row; x++) {
            if (in_block == 0) { /* a stored block's header: BFINAL, BTYPE 00, LEN, NLEN */
                size_t len = raw - done < STORED_MAX ? raw - done : STORED_MAX;
                *p++ = done + len == raw; /* the last block */
                *p++ = (unsigned char)len;
                *p++ = (unsigned char)(len >> 8);
                *p++ = (unsigned char)~len;
                *p++ = (unsigned char)(~len >> 8);
                in_block = len;
            }
            unsigned char c = x == 0 ? 0 /* filter: none */ : rgb[(size_t)y * w * 3 + x - 1];
            *p++ = c;
            a = (a + c) % 65521;
            b = (b + a) % 65521;
            in_block--;
            done++;
        }
    put32(p, (b << 16) | a);
    p += 4;

    unsigned char ihdr[13];
    put32(ihdr, w);
    put32(ihdr + 4, h);
    ihdr[8] = 8;  /* bits per sample */
    ihdr[9] = 2;  /* RGB */
    ihdr[10] = 0; /* deflate */
    ihdr[11] = 0; /* adaptive filtering (each row says which: none) */
    ihdr[12] = 0; /* no interlace */
    static const unsigned char signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(z);
        return -1;
    }
    int rc = fwrite(signature, 1, 8, f) == 8 && chunk(f, "IHDR", ihdr, sizeof(ihdr)) == 0 &&
                     chunk(f, "IDAT", z, (size_t)(p - z)) == 0 && chunk(f, "IEND", ihdr, 0) == 0 /* (no data) */
                 ? 0
                 : -1;
    int saved = errno;
    free(z);
    if (fclose(f) != 0 && rc == 0) {
        saved = errno;
        rc = -1;
    }
    errno = saved;
    return rc;
}
