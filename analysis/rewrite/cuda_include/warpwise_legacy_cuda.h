/* warpwise: CUDA APIs that older toolkits declared and CUDA 12/13 removed, declared again for warpwise's own
 * parse only (never compiled, never written into user code). parse.py force-includes this header only when
 * the parse with the installed headers fails on one of these names (parse._LEGACY_NAME): modern code may
 * use `texture` or `surface` for its own things, and must parse exactly as before.
 *
 * Real projects are analysed as they are, and many were built with an older toolkit (Rodinia: CUDA 2–10).
 * An older nvcc accepted this code; without these declarations the parse stops at "no template named
 * 'texture'" and warpwise would withhold its rewrites. Every declaration is deprecated with the CUDA version
 * that removed it and what replaces it, so the parse warns (a warning is not a parse error).
 *
 * Written here from the documented API (CUDA Runtime API reference, "Texture Reference Management
 * [DEPRECATED]", "Surface Reference Management [DEPRECATED]", "C++ API Routines"; CUDA C Programming Guide,
 * "Texture Reference API" / "Texture Fetching"; CUDA Driver API reference of CUDA 3.1 for the pre-3.2
 * signatures), not from NVIDIA's headers: signatures as documented, bodies absent.
 *
 * The removed cudaDeviceProp fields (CUDA 13.0) cannot be declared from outside the struct: parse.py adds
 * them to a generated copy of the installed driver_types.h in warpwise's cache (LEGACY_DEVICE_PROP_FIELDS).
 */
#pragma once
#define __WW_TEXREF_GONE __attribute__((deprecated( \
    "texture references were removed in CUDA 12.0: use a texture object (cudaCreateTextureObject, tex1Dfetch<T>(obj, x))")))
#define __WW_SURFREF_GONE __attribute__((deprecated( \
    "surface references were removed in CUDA 12.0: use a surface object (cudaCreateSurfaceObject)")))

/* ---- texture references (removed in CUDA 12.0) ---- */
struct __WW_TEXREF_GONE textureReference {
  int normalized;
  enum cudaTextureFilterMode filterMode;
  enum cudaTextureAddressMode addressMode[3];
  struct cudaChannelFormatDesc channelDesc;
  int sRGB;
  unsigned int maxAnisotropy;
  enum cudaTextureFilterMode mipmapFilterMode;
  float mipmapLevelBias;
  float minMipmapLevelClamp;
  float maxMipmapLevelClamp;
  int disableTrilinearOptimization;
};

template <class T, int texType = cudaTextureType1D, enum cudaTextureReadMode mode = cudaReadModeElementType>
struct __WW_TEXREF_GONE texture : public textureReference {
  __attribute__((host)) texture(int norm = 0, enum cudaTextureFilterMode fMode = cudaFilterModePoint,
                                enum cudaTextureAddressMode aMode = cudaAddressModeClamp);
  __attribute__((host)) texture(int norm, enum cudaTextureFilterMode fMode, enum cudaTextureAddressMode aMode,
                                struct cudaChannelFormatDesc desc);
};

extern "C" {
__WW_TEXREF_GONE __attribute__((host)) cudaError_t cudaBindTexture(size_t *offset, const struct textureReference *texref,
    const void *devPtr, const struct cudaChannelFormatDesc *desc, size_t size = 0xffffffffu /* UINT_MAX */);
__WW_TEXREF_GONE __attribute__((host)) cudaError_t cudaBindTexture2D(size_t *offset,
    const struct textureReference *texref, const void *devPtr, const struct cudaChannelFormatDesc *desc,
    size_t width, size_t height, size_t pitch);
__WW_TEXREF_GONE __attribute__((host)) cudaError_t cudaBindTextureToArray(const struct textureReference *texref,
    cudaArray_const_t array, const struct cudaChannelFormatDesc *desc);
__WW_TEXREF_GONE __attribute__((host)) cudaError_t cudaBindTextureToMipmappedArray(
    const struct textureReference *texref, cudaMipmappedArray_const_t mipmappedArray,
    const struct cudaChannelFormatDesc *desc);
__WW_TEXREF_GONE __attribute__((host)) cudaError_t cudaUnbindTexture(const struct textureReference *texref);
__WW_TEXREF_GONE __attribute__((host)) cudaError_t cudaGetTextureAlignmentOffset(size_t *offset,
    const struct textureReference *texref);
__WW_TEXREF_GONE __attribute__((host)) cudaError_t cudaGetTextureReference(const struct textureReference **texref,
    const void *symbol);
}

/* the C++ API's overloads on the texture template (cuda_runtime.h before 12.0) */
template <class T, int dim, enum cudaTextureReadMode readMode>
__WW_TEXREF_GONE __attribute__((host)) cudaError_t cudaBindTexture(size_t *offset,
    const struct texture<T, dim, readMode> &tex, const void *devPtr, const struct cudaChannelFormatDesc &desc,
    size_t size = 0xffffffffu);
template <class T, int dim, enum cudaTextureReadMode readMode>
__WW_TEXREF_GONE __attribute__((host)) cudaError_t cudaBindTexture(size_t *offset,
    const struct texture<T, dim, readMode> &tex, const void *devPtr, size_t size = 0xffffffffu);
template <class T, int dim, enum cudaTextureReadMode readMode>
__WW_TEXREF_GONE __attribute__((host)) cudaError_t cudaBindTexture2D(size_t *offset,
    const struct texture<T, dim, readMode> &tex, const void *devPtr, const struct cudaChannelFormatDesc &desc,
    size_t width, size_t height, size_t pitch);
template <class T, int dim, enum cudaTextureReadMode readMode>
__WW_TEXREF_GONE __attribute__((host)) cudaError_t cudaBindTexture2D(size_t *offset,
    const struct texture<T, dim, readMode> &tex, const void *devPtr, size_t width, size_t height, size_t pitch);
template <class T, int dim, enum cudaTextureReadMode readMode>
__WW_TEXREF_GONE __attribute__((host)) cudaError_t cudaBindTextureToArray(
    const struct texture<T, dim, readMode> &tex, cudaArray_const_t array, const struct cudaChannelFormatDesc &desc);
template <class T, int dim, enum cudaTextureReadMode readMode>
__WW_TEXREF_GONE __attribute__((host)) cudaError_t cudaBindTextureToArray(
    const struct texture<T, dim, readMode> &tex, cudaArray_const_t array);
template <class T, int dim, enum cudaTextureReadMode readMode>
__WW_TEXREF_GONE __attribute__((host)) cudaError_t cudaBindTextureToMipmappedArray(
    const struct texture<T, dim, readMode> &tex, cudaMipmappedArray_const_t mipmappedArray,
    const struct cudaChannelFormatDesc &desc);
template <class T, int dim, enum cudaTextureReadMode readMode>
__WW_TEXREF_GONE __attribute__((host)) cudaError_t cudaBindTextureToMipmappedArray(
    const struct texture<T, dim, readMode> &tex, cudaMipmappedArray_const_t mipmappedArray);
template <class T, int dim, enum cudaTextureReadMode readMode>
__WW_TEXREF_GONE __attribute__((host)) cudaError_t cudaUnbindTexture(const struct texture<T, dim, readMode> &tex);
template <class T, int dim, enum cudaTextureReadMode readMode>
__WW_TEXREF_GONE __attribute__((host)) cudaError_t cudaGetTextureAlignmentOffset(size_t *offset,
    const struct texture<T, dim, readMode> &tex);

/* What a fetch returns (Programming Guide, "Texture Fetching"): the texel type with
 * cudaReadModeElementType; with cudaReadModeNormalizedFloat an 8/16-bit integer texel comes back as float of
 * the same vector width. tex2Dgather returns four of the texel's component type (float4 when normalized). */
template <class T, enum cudaTextureReadMode M> struct __ww_texel { typedef T type; typedef T component; };
#define __WW_NORMALIZED(T, F, C)                                                             \
  template <> struct __ww_texel<T, cudaReadModeNormalizedFloat> { typedef F type; typedef float component; }; \
  template <> struct __ww_texel<T, cudaReadModeElementType> { typedef T type; typedef C component; };
#define __WW_NORMALIZED_ALL(V, C)                                                                    \
  __WW_NORMALIZED(V##1, float1, C) __WW_NORMALIZED(V##2, float2, C) __WW_NORMALIZED(V##4, float4, C)
__WW_NORMALIZED(char, float, char) __WW_NORMALIZED(signed char, float, signed char)
__WW_NORMALIZED(unsigned char, float, unsigned char) __WW_NORMALIZED(short, float, short)
__WW_NORMALIZED(unsigned short, float, unsigned short)
__WW_NORMALIZED_ALL(char, char) __WW_NORMALIZED_ALL(uchar, unsigned char) __WW_NORMALIZED_ALL(short, short)
__WW_NORMALIZED_ALL(ushort, unsigned short)
#undef __WW_NORMALIZED_ALL
#undef __WW_NORMALIZED
#define __WW_COMPONENT(V, C) template <> struct __ww_texel<V, cudaReadModeElementType> { typedef V type; typedef C component; };
__WW_COMPONENT(int1, int) __WW_COMPONENT(int2, int) __WW_COMPONENT(int4, int)
__WW_COMPONENT(uint1, unsigned int) __WW_COMPONENT(uint2, unsigned int) __WW_COMPONENT(uint4, unsigned int)
__WW_COMPONENT(float1, float) __WW_COMPONENT(float2, float) __WW_COMPONENT(float4, float)
#undef __WW_COMPONENT
template <class C> struct __ww_gather4 { typedef float4 type; };
template <> struct __ww_gather4<char> { typedef char4 type; };
template <> struct __ww_gather4<signed char> { typedef char4 type; };
template <> struct __ww_gather4<unsigned char> { typedef uchar4 type; };
template <> struct __ww_gather4<short> { typedef short4 type; };
template <> struct __ww_gather4<unsigned short> { typedef ushort4 type; };
template <> struct __ww_gather4<int> { typedef int4 type; };
template <> struct __ww_gather4<unsigned int> { typedef uint4 type; };

/* Fetches from a texture reference (texture_fetch_functions.h before CUDA 12.0). */
#define __WW_TEX(R, NAME, DIM, ...)                                                                  \
  template <class T, enum cudaTextureReadMode M>                                                     \
  __WW_TEXREF_GONE __attribute__((device)) R NAME(texture<T, DIM, M> t, __VA_ARGS__);
#define __WW_TEXEL typename __ww_texel<T, M>::type
__WW_TEX(__WW_TEXEL, tex1Dfetch, cudaTextureType1D, int x)
__WW_TEX(__WW_TEXEL, tex1D, cudaTextureType1D, float x)
__WW_TEX(__WW_TEXEL, tex2D, cudaTextureType2D, float x, float y)
__WW_TEX(__WW_TEXEL, tex3D, cudaTextureType3D, float x, float y, float z)
__WW_TEX(__WW_TEXEL, tex1DLayered, cudaTextureType1DLayered, float x, int layer)
__WW_TEX(__WW_TEXEL, tex2DLayered, cudaTextureType2DLayered, float x, float y, int layer)
__WW_TEX(__WW_TEXEL, texCubemap, cudaTextureTypeCubemap, float x, float y, float z)
__WW_TEX(__WW_TEXEL, texCubemapLayered, cudaTextureTypeCubemapLayered, float x, float y, float z, int layer)
__WW_TEX(__WW_TEXEL, tex1DLod, cudaTextureType1D, float x, float level)
__WW_TEX(__WW_TEXEL, tex2DLod, cudaTextureType2D, float x, float y, float level)
__WW_TEX(__WW_TEXEL, tex3DLod, cudaTextureType3D, float x, float y, float z, float level)
__WW_TEX(__WW_TEXEL, tex1DLayeredLod, cudaTextureType1DLayered, float x, int layer, float level)
__WW_TEX(__WW_TEXEL, tex2DLayeredLod, cudaTextureType2DLayered, float x, float y, int layer, float level)
__WW_TEX(__WW_TEXEL, texCubemapLod, cudaTextureTypeCubemap, float x, float y, float z, float level)
__WW_TEX(__WW_TEXEL, texCubemapLayeredLod, cudaTextureTypeCubemapLayered, float x, float y, float z, int layer,
         float level)
__WW_TEX(__WW_TEXEL, tex1DGrad, cudaTextureType1D, float x, float dPdx, float dPdy)
__WW_TEX(__WW_TEXEL, tex2DGrad, cudaTextureType2D, float x, float y, float2 dPdx, float2 dPdy)
__WW_TEX(__WW_TEXEL, tex3DGrad, cudaTextureType3D, float x, float y, float z, float4 dPdx, float4 dPdy)
__WW_TEX(__WW_TEXEL, tex1DLayeredGrad, cudaTextureType1DLayered, float x, int layer, float dPdx, float dPdy)
__WW_TEX(__WW_TEXEL, tex2DLayeredGrad, cudaTextureType2DLayered, float x, float y, int layer, float2 dPdx,
         float2 dPdy)
template <class T, enum cudaTextureReadMode M>
__WW_TEXREF_GONE __attribute__((device)) typename __ww_gather4<typename __ww_texel<T, M>::component>::type tex2Dgather(
    texture<T, cudaTextureType2D, M> t, float x, float y, int comp = 0);
#undef __WW_TEXEL
#undef __WW_TEX

/* ---- surface references (removed in CUDA 12.0) ---- */
struct __WW_SURFREF_GONE surfaceReference {
  struct cudaChannelFormatDesc channelDesc;
};
template <class T, int dim = 1>
struct __WW_SURFREF_GONE surface : public surfaceReference {
  __attribute__((host)) surface(void);
  __attribute__((host)) surface(struct cudaChannelFormatDesc desc);
};
template <int dim>
struct __WW_SURFREF_GONE surface<void, dim> : public surfaceReference {
  __attribute__((host)) surface(void);
};
extern "C" {
__WW_SURFREF_GONE __attribute__((host)) cudaError_t cudaBindSurfaceToArray(const struct surfaceReference *surfref,
    cudaArray_const_t array, const struct cudaChannelFormatDesc *desc);
__WW_SURFREF_GONE __attribute__((host)) cudaError_t cudaGetSurfaceReference(const struct surfaceReference **surfref,
    const void *symbol);
}
template <class T, int dim>
__WW_SURFREF_GONE __attribute__((host)) cudaError_t cudaBindSurfaceToArray(const struct surface<T, dim> &surf,
    cudaArray_const_t array, const struct cudaChannelFormatDesc &desc);
template <class T, int dim>
__WW_SURFREF_GONE __attribute__((host)) cudaError_t cudaBindSurfaceToArray(const struct surface<T, dim> &surf,
    cudaArray_const_t array);
/* reads and writes through a surface reference (surface_functions.h before CUDA 12.0): the value form
 * (T surf2Dread<T>(surf, x, y)) and the out-pointer form (surf2Dread(&v, surf, x, y)) */
#define __WW_SURF(NAME, DIM, ...)                                                                    \
  template <class T> __WW_SURFREF_GONE __attribute__((device)) T NAME(surface<void, DIM> s, __VA_ARGS__, \
      enum cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);                                    \
  template <class T> __WW_SURFREF_GONE __attribute__((device)) void NAME(T *res, surface<void, DIM> s,   \
      __VA_ARGS__, enum cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);
#define __WW_SURFW(NAME, DIM, ...)                                                                   \
  template <class T> __WW_SURFREF_GONE __attribute__((device)) void NAME(T val, surface<void, DIM> s,    \
      __VA_ARGS__, enum cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap);
__WW_SURF(surf1Dread, cudaSurfaceType1D, int x)
__WW_SURF(surf2Dread, cudaSurfaceType2D, int x, int y)
__WW_SURF(surf3Dread, cudaSurfaceType3D, int x, int y, int z)
__WW_SURF(surf1DLayeredread, cudaSurfaceType1DLayered, int x, int layer)
__WW_SURF(surf2DLayeredread, cudaSurfaceType2DLayered, int x, int y, int layer)
__WW_SURFW(surf1Dwrite, cudaSurfaceType1D, int x)
__WW_SURFW(surf2Dwrite, cudaSurfaceType2D, int x, int y)
__WW_SURFW(surf3Dwrite, cudaSurfaceType3D, int x, int y, int z)
__WW_SURFW(surf1DLayeredwrite, cudaSurfaceType1DLayered, int x, int layer)
__WW_SURFW(surf2DLayeredwrite, cudaSurfaceType2DLayered, int x, int y, int layer)
#undef __WW_SURFW
#undef __WW_SURF

/* ---- the driver API's pre-3.2 signatures ----
 * CUDA 3.2 made the driver API's sizes size_t (cuMemGetInfo became cuMemGetInfo_v2 through a macro of
 * cuda.h); the unsigned-int forms stayed reachable with CUDA_FORCE_API_VERSION=3010 (__CUDA_API_VERSION <
 * 3020) in later toolkits, and CUDA 13's cuda.h declares them only for NVIDIA's own build
 * (__CUDA_API_VERSION_INTERNAL). Code written for CUDA <= 3.1 passes unsigned int pointers (Rodinia
 * mummergpu). Declared as C++ overloads of the _v2 names that cuda.h's macros call (an extern "C" function
 * may be overloaded by C++-linkage ones). */
#define __WW_PRE32 __attribute__((host, deprecated( \
    "pre-CUDA 3.2 driver API signature (unsigned int sizes): CUDA 3.2 made them size_t")))
__WW_PRE32 CUresult cuMemGetInfo_v2(unsigned int *free, unsigned int *total);
__WW_PRE32 CUresult cuDeviceTotalMem_v2(unsigned int *bytes, CUdevice dev);
__WW_PRE32 CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, unsigned int *pPitch, size_t WidthInBytes, size_t Height,
                                       unsigned int ElementSizeBytes);
__WW_PRE32 CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, unsigned int *bytes, CUmodule hmod, const char *name);
__WW_PRE32 CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, unsigned int *psize, CUdeviceptr dptr);
#undef __WW_PRE32
#undef __WW_SURFREF_GONE
#undef __WW_TEXREF_GONE
