// Runs a GGUF through the prebuilt llama.cpp (node-llama-cpp 3.21.1 libs) exactly as the parity
// reference did, dumping every graph tensor via cb_eval.
// usage (ORACLE_BINS=<dir of the prebuilt libs>): lldump model.gguf out.bin all|gen t0 t1 ... [-- d0 d1 ...]
//   all: one batch of the tokens, every position output; gen: batch with the last output, then
//   one-token decodes of d0 d1 ...
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "llama.h"
#include "ggml.h"
#include "ggml-backend.h"
static FILE *out; static int step = 0;
static const char *only = NULL;
static bool cb(struct ggml_tensor *t, bool ask, void *ud) {
  if (ask) return true;
  if (only && !strstr(t->name, only)) return true;
  // write: step, name[64], type, ne[4], then f32 data (contiguous rows by strides)
  int64_t n = ggml_nelements(t);
  float *buf = malloc(n * 4);
  int64_t idx = 0;
  for (int64_t i3 = 0; i3 < t->ne[3]; i3++) for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
  for (int64_t i1 = 0; i1 < t->ne[1]; i1++) for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
    char *p = (char *)t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
    float v;
    if (t->type == GGML_TYPE_F32) v = *(float *)p;
    else if (t->type == GGML_TYPE_F16) v = ggml_fp16_to_fp32(*(ggml_fp16_t *)p);
    else if (t->type == GGML_TYPE_I32) v = (float)*(int32_t *)p;
    else { v = 0; }
    buf[idx++] = v;
  }
  char name[64] = {0}; strncpy(name, t->name, 63);
  int32_t hdr[2] = { step, t->type };
  fwrite(hdr, 4, 2, out); fwrite(name, 1, 64, out); fwrite(t->ne, 8, 4, out);
  char opn[16] = {0}; strncpy(opn, ggml_op_desc(t), 15); fwrite(opn, 1, 16, out);
  fwrite(buf, 4, n, out); free(buf);
  return true;
}
int main(int argc, char **argv) {
  llama_backend_init();
  ggml_backend_load_all_from_path(getenv("ORACLE_BINS"));
  only = getenv("ONLY");
  struct llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  struct llama_model *model = llama_model_load_from_file(argv[1], mp);
  if (!model) return 1;
  out = fopen(argv[2], "wb");
  int all = !strcmp(argv[3], "all");
  int nt = 0, nd = 0; int32_t toks[512], dec[4096]; int dd = 0;
  for (int i = 4; i < argc; i++) { if (!strcmp(argv[i], "--")) { dd = 1; continue; } if (dd) dec[nd++] = atoi(argv[i]); else toks[nt++] = atoi(argv[i]); }
  struct llama_context_params cp = llama_context_default_params();
  cp.n_ctx = getenv("N_CTX") ? atoi(getenv("N_CTX")) : 256; cp.n_batch = 256; cp.n_ubatch = 256; cp.n_threads = 1; cp.n_threads_batch = 1;
  cp.no_perf = true; cp.swa_full = false; cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  cp.type_k = GGML_TYPE_F16; cp.type_v = GGML_TYPE_F16; cp.n_seq_max = 1;
  cp.cb_eval = cb; cp.cb_eval_user_data = NULL;
  struct llama_context *ctx = llama_init_from_model(model, cp);
  int nv = llama_vocab_n_tokens(llama_model_get_vocab(model));
  struct llama_batch b = llama_batch_init(256, 0, 1);
  b.n_tokens = nt;
  for (int i = 0; i < nt; i++) { b.token[i] = toks[i]; b.pos[i] = i; b.n_seq_id[i] = 1; b.seq_id[i][0] = 0; b.logits[i] = all || i == nt - 1; }
  if (llama_decode(ctx, b)) return 2;
  FILE *lf = fopen(getenv("LOGITS") ? getenv("LOGITS") : "/dev/null", "wb");
  if (all) for (int i = 0; i < nt; i++) fwrite(llama_get_logits_ith(ctx, i), 4, nv, lf);
  else fwrite(llama_get_logits_ith(ctx, -1), 4, nv, lf);
  for (int k = 0; k < nd; k++) {
    step++;
    b.n_tokens = 1; b.token[0] = dec[k]; b.pos[0] = nt + k; b.n_seq_id[0] = 1; b.seq_id[0][0] = 0; b.logits[0] = 1;
    if (llama_decode(ctx, b)) return 3;
    fwrite(llama_get_logits_ith(ctx, -1), 4, nv, lf);
  }
  fclose(lf); fclose(out);
  return 0;
}
