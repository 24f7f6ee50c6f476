// Golden-vector oracle: calls functions exported by ggml's prebuilt shared libraries (as shipped
// in @node-llama-cpp/linux-x64) by symbol name. Usage: oracle <lib|base> <q|dq|dot|h16> <symbol> <n> [bytes]
// with the input on stdin and the raw output on stdout. See gen-golden.mjs.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
typedef void (*qfn)(const float*, void*, int64_t);
typedef void (*dqfn)(const void*, float*, int64_t);
typedef void (*dotfn)(int, float*, size_t, const void*, size_t, const void*, size_t, int);
typedef uint16_t (*h16fn)(float);
static void *readall(size_t *len) {
  size_t cap = 1 << 20, n = 0; char *b = malloc(cap); size_t r;
  while ((r = fread(b + n, 1, cap - n, stdin)) > 0) { n += r; if (n == cap) { cap *= 2; b = realloc(b, cap); } }
  *len = n; return b;
}
int main(int argc, char **argv) {
  // argv: lib kind func n [wbytes]
  if (argc < 5) return 2;
  void *base = dlopen("libggml-base.so", RTLD_NOW | RTLD_GLOBAL);
  if (!base) { fprintf(stderr, "%s\n", dlerror()); return 3; }
  void *lib = strcmp(argv[1], "base") == 0 ? base : dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 3; }
  void (*init)(void) = (void (*)(void))dlsym(lib, "ggml_cpu_init");
  if (init) init(); // fills the fp16 lookup table the CPU kernels use
  void *f = dlsym(lib, argv[3]);
  if (!f) { fprintf(stderr, "no symbol %s\n", argv[3]); return 4; }
  long n = atol(argv[4]);
  size_t len; char *in = readall(&len);
  if (!strcmp(argv[2], "q")) {  // floats in, bytes out (size given as argv[5])
    long outb = atol(argv[5]); char *out = calloc(outb, 1);
    ((qfn)f)((const float*)in, out, n); fwrite(out, 1, outb, stdout);
  } else if (!strcmp(argv[2], "dq")) {
    float *out = calloc(n, 4); ((dqfn)f)(in, out, n); fwrite(out, 4, n, stdout);
  } else if (!strcmp(argv[2], "dot")) { // input = w bytes (argv[5] long) then a bytes
    long wb = atol(argv[5]); float s = 0;
    ((dotfn)f)((int)n, &s, 0, in, 0, in + wb, 0, 1); fwrite(&s, 4, 1, stdout);
  } else if (!strcmp(argv[2], "h16")) { // n floats -> n uint16
    uint16_t *out = calloc(n, 2); for (long i = 0; i < n; i++) out[i] = ((h16fn)f)(((float*)in)[i]); fwrite(out, 2, n, stdout);
  }
  return 0;
}
