/* dfbuffer: the block builder of dfbuffer.pandas (pandas_block.c).  The
 * pandas frame reader is pandas_frame.h.
 */
#ifndef DFBUFFER_PANDAS_BLOCK_H
#define DFBUFFER_PANDAS_BLOCK_H

#include "common.h"

/* the private _pandas_arrow_block, _rows_block and
   _stringdtype_arrow, added by module init. */
extern PyMethodDef dfb_pandas_methods[];

#endif /* DFBUFFER_PANDAS_BLOCK_H */
