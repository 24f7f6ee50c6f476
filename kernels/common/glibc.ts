// glibc's expf and logf (2.28 and later, Arm optimized-routines; the x86-64 FMA builds __expf_fma / __logf_fma
// that glibc selects on AVX2 machines): the scalar calls ggml's sigmoid, softplus, the Gated DeltaNet decay and
// SiLU's non-SIMD tail make. The same algorithms as src/backends/reference/libm.ts, the f64 fused multiply-adds
// emulated the same way (Dekker product + TwoSum); the tables are code (switches), not static data.

@inline function fma64(a: f64, b: f64, c: f64): f64 {
  const SPLIT: f64 = 134217729; // 2^27 + 1
  const p = a * b;
  let t = SPLIT * a;
  const ah = t - (t - a), al = a - ah;
  t = SPLIT * b;
  const bh = t - (t - b), bl = b - bh;
  const pe = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  const s = p + c;
  const bb = s - p;
  const se = (p - (s - bb)) + (c - bb);
  return s + (se + pe);
}

// e_exp2f_data.c (EXP2F_TABLE_BITS 5): bits(2^(i/32)) - (i << 47)
export function exp2fTab(i: i32): u64 {
  switch (i) {
    case 0: return 0x3ff0000000000000; case 1: return 0x3fefd9b0d3158574; case 2: return 0x3fefb5586cf9890f; case 3: return 0x3fef9301d0125b51;
    case 4: return 0x3fef72b83c7d517b; case 5: return 0x3fef54873168b9aa; case 6: return 0x3fef387a6e756238; case 7: return 0x3fef1e9df51fdee1;
    case 8: return 0x3fef06fe0a31b715; case 9: return 0x3feef1a7373aa9cb; case 10: return 0x3feedea64c123422; case 11: return 0x3feece086061892d;
    case 12: return 0x3feebfdad5362a27; case 13: return 0x3feeb42b569d4f82; case 14: return 0x3feeab07dd485429; case 15: return 0x3feea47eb03a5585;
    case 16: return 0x3feea09e667f3bcd; case 17: return 0x3fee9f75e8ec5f74; case 18: return 0x3feea11473eb0187; case 19: return 0x3feea589994cce13;
    case 20: return 0x3feeace5422aa0db; case 21: return 0x3feeb737b0cdc5e5; case 22: return 0x3feec49182a3f090; case 23: return 0x3feed503b23e255d;
    case 24: return 0x3feee89f995ad3ad; case 25: return 0x3feeff76f2fb5e47; case 26: return 0x3fef199bdd85529c; case 27: return 0x3fef3720dcef9069;
    case 28: return 0x3fef5818dcfba487; case 29: return 0x3fef7c97337b9b5f; case 30: return 0x3fefa4afa2a490da; default: return 0x3fefd0765b6e4540;
  }
}

/** glibc expf (x86-64 FMA build) */
export function expf_glibc(x: f32): f32 {
  const ix = reinterpret<u32>(x);
  const abstop = (ix >> 20) & 0x7ff;
  if (abstop >= 0x42b) { // |x| >= 88, inf, nan
    if (ix == 0xff800000) return 0;
    if (abstop >= 0x7f8) return x + x;
    if (x > reinterpret<f32>(0x42b17217)) return Infinity; // 0x1.62e42ep6
    if (x < reinterpret<f32>(0xc2cff1b4)) return 0; // -0x1.9fe368p6
  }
  const SHIFT = reinterpret<f64>(0x4338000000000000), INVLN2N = reinterpret<f64>(0x40471547652b82fe);
  const C0 = reinterpret<f64>(0x3ebc6af84b912394), C1 = reinterpret<f64>(0x3f2ebfce50fac4f3), C2 = reinterpret<f64>(0x3f962e42ff0c52d6);
  const xd = <f64>x;
  const kd = fma64(INVLN2N, xd, SHIFT) - SHIFT;
  const r = fma64(INVLN2N, xd, -kd);
  const ki = <i64>kd;
  const s = reinterpret<f64>(exp2fTab(<i32>(ki & 31)) + (<u64>ki << 47));
  const z = fma64(C0, r, C1);
  const y = fma64(z, r * r, fma64(C2, r, 1));
  return <f32>(y * s);
}

// e_logf_data.c (LOGF_TABLE_BITS 4): 1/c and log(c) per subinterval
function logfInvc(i: i32): f64 {
  switch (i) {
    case 0: return reinterpret<f64>(0x3ff661ec79f8f3be); case 1: return reinterpret<f64>(0x3ff571ed4aaf883d); case 2: return reinterpret<f64>(0x3ff49539f0f010b0);
    case 3: return reinterpret<f64>(0x3ff3c995b0b80385); case 4: return reinterpret<f64>(0x3ff30d190c8864a5); case 5: return reinterpret<f64>(0x3ff25e227b0b8ea0);
    case 6: return reinterpret<f64>(0x3ff1bb4a4a1a343f); case 7: return reinterpret<f64>(0x3ff12358f08ae5ba); case 8: return reinterpret<f64>(0x3ff0953f419900a7);
    case 9: return 1; case 10: return reinterpret<f64>(0x3fee608cfd9a47ac); case 11: return reinterpret<f64>(0x3feca4b31f026aa0);
    case 12: return reinterpret<f64>(0x3feb2036576afce6); case 13: return reinterpret<f64>(0x3fe9c2d163a1aa2d); case 14: return reinterpret<f64>(0x3fe886e6037841ed);
    default: return reinterpret<f64>(0x3fe767dcf5534862);
  }
}
function logfLogc(i: i32): f64 {
  switch (i) {
    case 0: return reinterpret<f64>(0xbfd57bf7808caade); case 1: return reinterpret<f64>(0xbfd2bef0a7c06ddb); case 2: return reinterpret<f64>(0xbfd01eae7f513a67);
    case 3: return reinterpret<f64>(0xbfcb31d8a68224e9); case 4: return reinterpret<f64>(0xbfc6574f0ac07758); case 5: return reinterpret<f64>(0xbfc1aa2bc79c8100);
    case 6: return reinterpret<f64>(0xbfba4e76ce8c0e5e); case 7: return reinterpret<f64>(0xbfb1973c5a611ccc); case 8: return reinterpret<f64>(0xbfa252f438e10c1e);
    case 9: return 0; case 10: return reinterpret<f64>(0x3faaa5aa5df25984); case 11: return reinterpret<f64>(0x3fbc5e53aa362eb4);
    case 12: return reinterpret<f64>(0x3fc526e57720db08); case 13: return reinterpret<f64>(0x3fcbc2860d224770); case 14: return reinterpret<f64>(0x3fd1058bc8a07ee1);
    default: return reinterpret<f64>(0x3fd4043057b6ee09);
  }
}

/** glibc logf (x86-64 FMA build) */
export function logf_glibc(x: f32): f32 {
  let ix = reinterpret<u32>(x);
  if (ix == 0x3f800000) return 0;
  if (ix - 0x00800000 >= 0x7f800000 - 0x00800000) {
    if ((ix & 0x7fffffff) == 0) return -Infinity;
    if (ix == 0x7f800000) return Infinity;
    if ((ix & 0x80000000) != 0 || (ix & 0x7fffffff) > 0x7f800000) return NaN;
    ix = reinterpret<u32>(x * <f32>8388608.0) - (23 << 23); // subnormal: normalize
  }
  const LN2 = reinterpret<f64>(0x3fe62e42fefa39ef);
  const A0 = reinterpret<f64>(0xbfd00ea348b88334), A1 = reinterpret<f64>(0x3fd5575b0be00b6a), A2 = reinterpret<f64>(0xbfdffffef20a4123);
  const tmp = ix - 0x3f330000;
  const i = <i32>((tmp >> 19) & 15);
  const k = <i32>tmp >> 23;
  const z = <f64>reinterpret<f32>(ix - (tmp & 0xff800000));
  const r = fma64(z, logfInvc(i), -1);
  const y0 = fma64(<f64>k, LN2, logfLogc(i));
  const r2 = r * r;
  let y = fma64(A1, r, A2);
  y = fma64(A0, r2, y);
  y = fma64(y, r2, y0 + r);
  return <f32>y;
}
