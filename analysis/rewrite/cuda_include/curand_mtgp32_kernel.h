/* warpwise: clang's CUDA wrapper force-includes this cuRAND header (to fix up the types of blockDim and
 * threadIdx); cuRAND is not among the CUDA headers warpwise installs. Empty on purpose. */
#pragma once
