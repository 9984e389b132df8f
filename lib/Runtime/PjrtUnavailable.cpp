// The PJRT executor of a runtime built without pjrt_c_api.h (lib/Runtime/CMakeLists.txt):
// loading a PJRT model says so, and nothing else changes.
#include "Pjrt.h"

using namespace thunder::runtime;

PjrtExecutor *thunder::runtime::createPjrtExecutor(const thunder_model &model,
                                                   const thunder_program_v1 &,
                                                   const HostWeight *, thunder_status &status) {
  status = fail(THUNDER_ERROR_DEVICE,
                std::string("cannot run model '") + model.table->name + "' (" + model.path +
                    "): it runs through a PJRT plugin, but this runtime was built without "
                    "PJRT support (pjrt_c_api.h was not found when it was configured: pip "
                    "install xla-cpu-pjrt, or set THUNDER_PJRT_INCLUDE_DIR, and rebuild)");
  return nullptr;
}

// No executor is ever created.
void thunder::runtime::destroyPjrtExecutor(PjrtExecutor *) {}
void thunder::runtime::describePjrt(const PjrtExecutor &, std::string &, std::string &) {}

thunder_status thunder::runtime::runPjrt(const thunder_model &model, const thunder_tensor *,
                                         const thunder_tensor *) {
  return fail(THUNDER_ERROR_RUN, std::string("model '") + model.table->name +
                                     "' cannot run: this runtime has no PJRT support");
}
