/* libFuzzer target: the PTX decoder (src/cuda/kernels/opara_ptx_pack.h) on any bytes. The first two bytes are
   the recorded size of the text (little-endian, 0..65535), the rest the packed stream; the stream and the
   output are in buffers of exactly their size, so a read or a write outside them is a sanitizer report.
   Invariants: no crash, no sanitizer report, a stream is either refused or fills the output exactly, and
   a refusal's position lies inside the stream. Build: make fuzz (clang -fsanitize=fuzzer,address,undefined).
   Seeds (tests/fuzz/corpus_ptx/): the hand-made streams of tests/test_ptx_pack.c and the packed sample
   kernel of the emulator's tests. */
#include "../../src/cuda/kernels/opara_ptx_pack.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    size_t text_size, at = 0;
    char *stream, *text;
    opara__ptx_unpack_result r;
    if (size < 2) return 0;
    text_size = (size_t)data[0] | (size_t)data[1] << 8;
    stream = (char*)malloc(size - 2 ? size - 2 : 1);
    text = (char*)malloc(text_size ? text_size : 1);
    if (stream && text) {
        memcpy(stream, data + 2, size - 2);
        r = opara__ptx_unpack(stream, size - 2, text, text_size, &at);
        if (at > size - 2 || opara__ptx_unpack_result_text(r)[0] == '?') abort();
    }
    free(stream);
    free(text);
    return 0;
}
