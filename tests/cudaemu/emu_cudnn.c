/* placeholder */
typedef int emu_cublas_placeholder;
