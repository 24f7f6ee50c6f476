// weight rows per cache tile in the matmul kernels
export const ROW_TILE = 8;
