/* A shared library that is not a Thunder model: it lacks thunder_model_entry_v1. */
__attribute__((visibility("default"))) int not_a_model(void) { return 42; }
