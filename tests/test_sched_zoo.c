/* Every zoo model (build/zoo/NAME.onnx from `make zoo`, or $OPARA_ZOO_DIR) under every strategy
   passes the plan verifier; GoogLeNet reproduces the paper's stream counts ("28 streams with
   Opara versus 4 streams with Nimble for GoogLeNet", Opara TC §V). Skips without the zoo. */
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"

static const char* zoo_dir(void) {
    const char* d = getenv("OPARA_ZOO_DIR");
    return d && d[0] ? d : "build/zoo";
}

static int zoo_load(opara_test* T, const char* name, opara_runtime** rt, opara_model** model) {
    char path[1024];
    FILE* f;
    opara_onnx_options o;
    snprintf(path, sizeof path, "%s/%s.onnx", zoo_dir(), name);
    f = fopen(path, "rb");
    if (!f) return 0;
    fclose(f);
    memset(&o, 0, sizeof o);
    o.default_dim = 256; /* PP-OCR's symbolic image height/width */
    if (opara_runtime_create(NULL, rt) != OPARA_OK) return 0;
    if (opara_model_load_onnx_file(*rt, path, &o, model) != OPARA_OK) {
        OT_LOG("%s: %s", path, opara_runtime_last_error(*rt));
        CHECK(!"zoo model loads");
        opara_runtime_destroy(*rt);
        return 0;
    }
    return 1;
}

static const char* const zoo_models[] = {"googlenet", "inception_v3", "squeezenet", "resnet50", "nasnet_mobile",
                                         "randwire", "deepfm", "bert_base", "t5_small_encoder", "ppocr_det"};

OT_TEST(every_zoo_model_under_every_strategy_verifies) {
    uint32_t i, found = 0;
    int s;
    for (i = 0; i < sizeof zoo_models / sizeof zoo_models[0]; ++i) {
        opara_runtime* rt = NULL;
        opara_model* m = NULL;
        if (!zoo_load(T, zoo_models[i], &rt, &m)) continue;
        found++;
        for (s = 0; s < OPARA_STRATEGY_COUNT; ++s) {
            opara__plan_desc d;
            opara__plan* p = NULL;
            opara_result r;
            memset(&d, 0, sizeof d);
            d.strategy = (opara_strategy)s;
            d.verify = 1;
            r = opara__plan_graph(opara__model_graph(m), 1, NULL, &d, &p, NULL, NULL);
            if (r != OPARA_OK) OT_LOG("%s / %s: %s", zoo_models[i], opara_strategy_name(d.strategy), opara_runtime_last_error(rt));
            CHECK(r == OPARA_OK);
            if (p && s == OPARA_STRATEGY_SEQUENTIAL) CHECK_EQ(p->n_streams, 1);
            opara__plan_free(rt, p);
        }
        opara_model_destroy(m);
        opara_runtime_destroy(rt);
    }
    if (!found) SKIP("no zoo models in %s (run `make zoo`)", zoo_dir());
}

OT_TEST(googlenet_streams_match_the_paper) {
    opara_runtime* rt = NULL;
    opara_model* m = NULL;
    opara__plan_desc d;
    opara__plan* p = NULL;
    if (!zoo_load(T, "googlenet", &rt, &m)) SKIP("%s/googlenet.onnx missing (run `make zoo`)", zoo_dir());
    memset(&d, 0, sizeof d);
    d.strategy = OPARA_STRATEGY_OPARA;
    REQUIRE(opara__plan_graph(opara__model_graph(m), 1, NULL, &d, &p, NULL, NULL) == OPARA_OK);
    CHECK_EQ(p->n_streams, 28);
    opara__plan_free(rt, p);
    d.strategy = OPARA_STRATEGY_NIMBLE;
    REQUIRE(opara__plan_graph(opara__model_graph(m), 1, NULL, &d, &p, NULL, NULL) == OPARA_OK);
    CHECK_EQ(p->n_streams, 4);
    opara__plan_free(rt, p);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
}

static const opara_test_case tests[] = {
    OT_CASE(every_zoo_model_under_every_strategy_verifies),
    OT_CASE(googlenet_streams_match_the_paper),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
