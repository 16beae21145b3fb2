/* opara version */
static int cli_version(int argc, char** argv) {
    (void)argc;
    (void)argv;
    printf("opara.h %s\n", opara_version_string());
    return 0;
}
