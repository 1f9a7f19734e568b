/* protect_cost.c — what a send costs to make safe, by size: copying it to a runtime
 * buffer (memcpy) against protecting its pages read-only and back (two mprotect
 * calls and the write fault's page-table work).  The crossover is what
 * UNBLOCK_COPY_MAX should be on a machine (docs/protection.md).  Also the copy-in
 * of a receive into inaccessible pages through /proc/self/mem, which programs with
 * threads of their own get instead of the memcpy.  Best of 50.
 * Prints "copy.<bytes>_us V", "protect.<bytes>_us V" and "procmem.<bytes>_us V"
 * (bench/compare.py format).
 * usage: protect_cost */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
int main(void){
  size_t sizes[]={4096,65536,262144,1048576,4194304,16777216};
  for(int s=0;s<6;s++){size_t n=sizes[s];
    char*a=mmap(0,n,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0),*b=mmap(0,n,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
    memset(a,1,n);memset(b,2,n);
    int R=50; double tc=1e9,tp=1e9;
    for(int r=0;r<R;r++){double t0=now();memcpy(b,a,n);double t1=now();if(t1-t0<tc)tc=t1-t0;}
    for(int r=0;r<R;r++){double t0=now();mprotect(a,n,PROT_READ);mprotect(a,n,PROT_READ|PROT_WRITE);a[0]++;double t1=now();if(t1-t0<tp)tp=t1-t0;}
    int fd=open("/proc/self/mem",O_RDWR|O_CLOEXEC); double tm=1e9;
    for(int r=0;fd>=0&&r<R;r++){mprotect(b,n,PROT_NONE);double t0=now();ssize_t w=pwrite(fd,a,n,(off_t)(uintptr_t)b);double t1=now();mprotect(b,n,PROT_READ|PROT_WRITE);if(w==(ssize_t)n&&t1-t0<tm)tm=t1-t0;}
    if(fd>=0)close(fd);
    printf("copy.%zu_us %.1f\nprotect.%zu_us %.1f\n", n, tc, n, tp);
    if(tm<1e9)printf("procmem.%zu_us %.1f\n", n, tm);
    munmap(a, n);
    munmap(b, n);}
}
