// The probabilities' expf as the parity references' tool computed them: glibc's expf, ported in the engine
// (src/backends/reference/glibc-expf.ts, where its sources and checks are described).
export { expfStats, fmaExact, glibcExpf } from '../../src/backends/reference/glibc-expf.js';
