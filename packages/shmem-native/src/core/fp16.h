/* Conversions between float and the 16-bit floating-point storage types (aclshmem_half_t:
 * IEEE 754 binary16; aclshmem_bfloat16_t: the upper half of a binary32).  Widening is exact.
 * Narrowing rounds to nearest, ties to even, whatever the FPU's rounding mode: overflow gives
 * an infinity, tiny values give subnormals or a signed zero, and a NaN stays a NaN with the
 * top bits of its payload (so every 16-bit pattern survives a round trip through float). */
#ifndef SHMEMI_FP16_H
#define SHMEMI_FP16_H

#include <stdint.h>

float shmemi_half_to_float(uint16_t h);
uint16_t shmemi_float_to_half(float f);
float shmemi_bfloat16_to_float(uint16_t b);
uint16_t shmemi_float_to_bfloat16(float f);

#endif
