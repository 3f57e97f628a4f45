// A tiny element-wise op library (the shape of an eager-mode tensor runtime's generic kernel): an OpList of up to
// four ops is passed by value and applied to every element in order.
#pragma once

enum OpKind : int { kScaleBias = 0, kClamp = 1, kGamma = 2, kSquare = 3 };

struct Op {
  OpKind kind;
  float a, b;  // scale/bias, lo/hi, exponent/unused
};

struct OpList {
  Op ops[4];
  int n;
};

__host__ __device__ inline float apply_one(const Op& op, float v) {
  switch (op.kind) {
    case kScaleBias: return v * op.a + op.b;
    case kClamp: return fminf(fmaxf(v, op.a), op.b);
    case kGamma: return v * v * op.a + v * op.b;  // a quadratic tone curve
    default: return v * v;
  }
}
