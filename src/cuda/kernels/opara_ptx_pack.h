/* opara_ptx_pack.h - the packed form of the embedded PTX (src/cuda/kernels/opara_ptx.h) and its decoder.
 * tools/embed_kernels.c writes it; the CUDA backend unpacks a kernel file's PTX into an allocated buffer
 * when it loads the module. Self-contained (the emulator's tests and the build tool include it too).
 *
 * Format: LZ77 in the manner of LZ4 (sequences of literals then one match), written so that a C string
 * literal holds it with almost no escapes. The stream is a string of bytes; where a number is due it is
 * written in DIGITS: the 92 printable ASCII characters ' ' (0x20) to '~' (0x7E) without '"', '?' and
 * '\\', each worth its rank (' ' = 0, '!' = 1, '#' = 2, ..., '~' = 91). Literals are the text's own bytes
 * (PTX is printable: only its newlines and rare quotes need an escape in the literal).
 *
 *   sequence  := token literal-extension? literal-bytes [match-extension? distance]
 *   token     := one digit t: L = t / 23 (0..3) literal bytes, M = t % 23 (0..22) the match length code
 *   literals  : L bytes; L = 3 means 3 + an extension
 *   match     : length M + 4 (4..25); M = 22 means 26 + an extension
 *   extension : digits added up; a digit 91 adds 91 and another digit follows, any other digit ends it
 *   distance  : 1 to 3 digits, least significant first, base 46: a digit d < 46 is the last one (worth
 *               d * 46^i), d >= 46 is worth (d - 46) * 46^i and another follows; the third must be < 46.
 *               The match copies `length` bytes from `value + 1` bytes back in the output (the window:
 *               46^3 = 97,336 bytes); it may overlap what it writes (a distance shorter than the length
 *               repeats the last bytes), so the copy goes byte by byte, forward.
 *
 * The stream ends after the literals of its last sequence (which then has no match) or after a match's
 * distance; the output must then be exactly the size recorded beside the stream. Anything else (a byte
 * that is not a digit where one is due, a length past the recorded size, a distance before the start of
 * the output, a stream that stops inside a sequence or too early) is refused: the decoder reads only
 * bytes [0, packed_size) of the stream and writes only [0, size) of the output. */
#ifndef OPARA_PTX_PACK_H
#define OPARA_PTX_PACK_H

#include <stddef.h>
#include <string.h>

#define OPARA__PTX_PACK_BASE 92
#define OPARA__PTX_PACK_LITERAL_CODES 4 /* token / 23 */
#define OPARA__PTX_PACK_MATCH_CODES 23  /* token % 23 */
#define OPARA__PTX_PACK_MIN_MATCH 4
#define OPARA__PTX_PACK_DISTANCE_BASE 46
#define OPARA__PTX_PACK_DISTANCE_DIGITS 3
#define OPARA__PTX_PACK_WINDOW (46L * 46L * 46L)

#if defined(__GNUC__) || defined(__clang__)
#  define OPARA__PTX_PACK_UNUSED __attribute__((unused))
#else
#  define OPARA__PTX_PACK_UNUSED
#endif

typedef enum opara__ptx_unpack_result {
    OPARA__PTX_UNPACKED = 0,
    OPARA__PTX_TRUNCATED,     /* the stream stops inside a sequence, or before the output is complete */
    OPARA__PTX_NOT_A_DIGIT,   /* a byte outside DIGITS where a number is due */
    OPARA__PTX_TOO_LONG,      /* literals or a match would run past the recorded size */
    OPARA__PTX_BAD_DISTANCE   /* a match reaches before the start of the output, or its distance has 4 digits */
} opara__ptx_unpack_result;

/* What went wrong, for the error message. */
static OPARA__PTX_PACK_UNUSED const char* opara__ptx_unpack_result_text(opara__ptx_unpack_result r) {
    switch (r) {
    case OPARA__PTX_UNPACKED: return "unpacked";
    case OPARA__PTX_TRUNCATED: return "the packed stream ends early";
    case OPARA__PTX_NOT_A_DIGIT: return "a byte that is not a digit where a number is due";
    case OPARA__PTX_TOO_LONG: return "a length runs past the recorded size";
    case OPARA__PTX_BAD_DISTANCE: return "a match reaches before the start of the text";
    }
    return "?";
}

/* The value of one digit, or -1 when c is not one. */
static OPARA__PTX_PACK_UNUSED int opara__ptx_digit_value(unsigned char c) {
    if (c < 0x20 || c > 0x7E || c == '"' || c == '?' || c == '\\') return -1;
    return (int)(c - 0x20) - (c > '"') - (c > '?') - (c > '\\');
}

/* The reading position in the stream; every read checks what is left. */
typedef struct opara__ptx_reader {
    const unsigned char* in;
    size_t size, at;
} opara__ptx_reader;

static OPARA__PTX_PACK_UNUSED opara__ptx_unpack_result opara__ptx_read_digit(opara__ptx_reader* r, int* value) {
    if (r->at >= r->size) return OPARA__PTX_TRUNCATED;
    *value = opara__ptx_digit_value(r->in[r->at++]);
    return *value < 0 ? OPARA__PTX_NOT_A_DIGIT : OPARA__PTX_UNPACKED;
}

/* Adds an extension to *length, refusing one that passes `room` (so no sum can overflow). */
static OPARA__PTX_PACK_UNUSED opara__ptx_unpack_result opara__ptx_read_extension(opara__ptx_reader* r, size_t* length,
                                                                                 size_t room) {
    int digit;
    do {
        opara__ptx_unpack_result e = opara__ptx_read_digit(r, &digit);
        if (e != OPARA__PTX_UNPACKED) return e;
        if ((size_t)digit > room - *length) return OPARA__PTX_TOO_LONG;
        *length += (size_t)digit;
    } while (digit == OPARA__PTX_PACK_BASE - 1);
    return OPARA__PTX_UNPACKED;
}

static OPARA__PTX_PACK_UNUSED opara__ptx_unpack_result opara__ptx_read_distance(opara__ptx_reader* r, size_t* distance) {
    size_t value = 0, scale = 1;
    int i, digit;
    for (i = 0; i < OPARA__PTX_PACK_DISTANCE_DIGITS; ++i, scale *= OPARA__PTX_PACK_DISTANCE_BASE) {
        opara__ptx_unpack_result e = opara__ptx_read_digit(r, &digit);
        if (e != OPARA__PTX_UNPACKED) return e;
        value += (size_t)(digit % OPARA__PTX_PACK_DISTANCE_BASE) * scale;
        if (digit < OPARA__PTX_PACK_DISTANCE_BASE) {
            *distance = value + 1;
            return OPARA__PTX_UNPACKED;
        }
    }
    return OPARA__PTX_BAD_DISTANCE;
}

/* Unpacks packed[0, packed_size) into out[0, size); *at (may be NULL) is where in the stream it stopped.
   out must hold size bytes; it is not NUL-terminated here. */
static OPARA__PTX_PACK_UNUSED opara__ptx_unpack_result opara__ptx_unpack(const char* packed, size_t packed_size, char* out,
                                                                          size_t size, size_t* at) {
    opara__ptx_reader r;
    size_t written = 0;
    opara__ptx_unpack_result e = OPARA__PTX_UNPACKED;
    r.in = (const unsigned char*)packed;
    r.size = packed_size;
    r.at = 0;
    while (e == OPARA__PTX_UNPACKED && r.at < r.size) {
        size_t literals, length, distance = 0;
        int token;
        if ((e = opara__ptx_read_digit(&r, &token)) != OPARA__PTX_UNPACKED) break;
        literals = (size_t)(token / OPARA__PTX_PACK_MATCH_CODES);
        length = (size_t)(token % OPARA__PTX_PACK_MATCH_CODES) + OPARA__PTX_PACK_MIN_MATCH;
        if (literals > size - written) e = OPARA__PTX_TOO_LONG;
        else if (literals == OPARA__PTX_PACK_LITERAL_CODES - 1) e = opara__ptx_read_extension(&r, &literals, size - written);
        if (e != OPARA__PTX_UNPACKED) break;
        if (literals > r.size - r.at) {
            e = OPARA__PTX_TRUNCATED;
            break;
        }
        memcpy(out + written, r.in + r.at, literals);
        written += literals;
        r.at += literals;
        if (r.at == r.size) break; /* the last sequence: literals only */
        if (length > size - written) e = OPARA__PTX_TOO_LONG;
        else if (length == OPARA__PTX_PACK_MATCH_CODES - 1 + OPARA__PTX_PACK_MIN_MATCH)
            e = opara__ptx_read_extension(&r, &length, size - written);
        if (e == OPARA__PTX_UNPACKED) e = opara__ptx_read_distance(&r, &distance);
        if (e == OPARA__PTX_UNPACKED && distance > written) e = OPARA__PTX_BAD_DISTANCE;
        for (; e == OPARA__PTX_UNPACKED && length > 0; --length, ++written) out[written] = out[written - distance];
    }
    if (e == OPARA__PTX_UNPACKED && written != size) e = OPARA__PTX_TRUNCATED;
    if (at) *at = r.at;
    return e;
}

#endif /* OPARA_PTX_PACK_H */
