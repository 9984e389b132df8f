//===- UnitBuild.cpp - Parallel, cached compiles of a backend's units -----===//
#include "thunder/Driver/UnitBuild.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unistd.h>

namespace thunder {

namespace {

/// The compiler binary's identity (resolved path, size, modification time):
/// an upgraded compiler makes new keys.
std::string programIdentity(llvm::StringRef program) {
  llvm::SmallString<256> real;
  if (llvm::sys::fs::real_path(program, real))
    real = program;
  llvm::sys::fs::file_status st;
  std::string id = real.str().str();
  if (!llvm::sys::fs::status(real, st))
    id += ":" + std::to_string(st.getSize()) + ":" +
          std::to_string(st.getLastModificationTime().time_since_epoch().count());
  return id;
}

std::string sha256Hex(llvm::StringRef text) {
  llvm::SHA256 hash;
  hash.update(text);
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

/// The cached object's path: <cache>/<2 hex>/<key><ext>.
std::string cachePath(llvm::StringRef cacheDir, llvm::StringRef key, llvm::StringRef object) {
  llvm::SmallString<256> path(cacheDir);
  llvm::sys::path::append(path, key.take_front(2));
  llvm::sys::path::append(path, key + llvm::sys::path::extension(object));
  return path.str().str();
}

/// `from` to `to` by a hard link, else by a copy (other file systems).
bool linkOrCopy(llvm::StringRef from, llvm::StringRef to) {
  if (!llvm::sys::fs::create_hard_link(from, to))
    return true;
  return !llvm::sys::fs::copy_file(from, to);
}

/// Puts `object` into the cache as `path`, whole or not at all: a hard link
/// (atomic; an existing entry wins) or a complete copy renamed into place.
void publish(llvm::StringRef object, const std::string &path) {
  llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path));
  if (llvm::sys::fs::exists(path))
    return;
  if (!llvm::sys::fs::create_hard_link(object, path))
    return;
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  if (llvm::sys::fs::copy_file(object, tmp)) {
    llvm::sys::fs::remove(tmp);
    return;
  }
  if (llvm::sys::fs::rename(tmp, path))
    llvm::sys::fs::remove(tmp);
}

} // namespace

UnitBuildResult runUnitCompiles(const std::vector<UnitCompile> &steps,
                                llvm::StringRef buildDir, llvm::StringRef cacheDir,
                                unsigned jobs, const std::vector<std::string> &prebuiltDirs) {
  UnitBuildResult result;
  if (steps.empty())
    return result;
  if (jobs == 0)
    jobs = std::max(1u, std::thread::hardware_concurrency());

  // Cache hits first (the cache, then the prebuilt objects); the rest is
  // compiled.
  std::vector<std::string> lookIn;
  if (!cacheDir.empty())
    lookIn.push_back(cacheDir.str());
  llvm::append_range(lookIn, prebuiltDirs);
  std::map<std::string, std::string> identities; // program -> identity
  std::vector<std::pair<const UnitCompile *, std::string>> work; // step, cache path
  for (const UnitCompile &step : steps) {
    llvm::sys::fs::create_directories(llvm::sys::path::parent_path(step.object));
    std::string cached;
    if (!lookIn.empty() && !step.key.empty()) {
      const std::string &program = step.argv.front();
      auto it = identities.find(program);
      if (it == identities.end()) {
        auto found = llvm::sys::findProgramByName(program);
        it = identities.emplace(program, programIdentity(found ? *found : program)).first;
      }
      std::string key = sha256Hex(step.key + "\n" + it->second);
      bool hit = false;
      for (const std::string &dir : lookIn) {
        std::string path = cachePath(dir, key, step.object);
        if (llvm::sys::fs::exists(path) && linkOrCopy(path, step.object)) {
          hit = true;
          break;
        }
      }
      if (hit) {
        ++result.cached;
        continue;
      }
      if (!cacheDir.empty())
        cached = cachePath(cacheDir, key, step.object);
    }
    work.push_back({&step, cached});
  }
  // A list scheduler: each worker takes the first step not yet taken whose
  // `after` steps have all finished (a unit after its precompiled header),
  // so a unit that needs nothing runs beside the steps others wait for.
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<bool> taken(work.size(), false);
  std::set<std::string> pending; // objects of the steps not finished yet
  for (const auto &entry : work)
    pending.insert(entry.first->object);
  auto ready = [&](const UnitCompile &step) {
    return llvm::none_of(step.after, [&](const std::string &o) { return pending.count(o); });
  };
  auto worker = [&] {
    while (true) {
      size_t i = 0;
      {
        std::unique_lock<std::mutex> lock(mutex);
        while (true) {
          if (!result.ok)
            return;
          i = 0;
          while (i < work.size() && (taken[i] || !ready(*work[i].first)))
            ++i;
          if (i < work.size())
            break;
          if (llvm::all_of(taken, [](bool t) { return t; }))
            return;
          changed.wait(lock);
        }
        taken[i] = true;
      }
      const auto &[step, cached] = work[i];
      auto program = llvm::sys::findProgramByName(step->argv.front());
      std::string log = step->object + ".log";
      std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log),
                                                    llvm::StringRef(log)};
      std::vector<llvm::StringRef> args(step->argv.begin(), step->argv.end());
      std::string errorText;
      int rc = program ? llvm::sys::ExecuteAndWait(*program, args, std::nullopt, redirects,
                                                   0, 0, &errorText)
                       : -1;
      std::string message;
      if (rc == 0) {
        if (!cached.empty())
          publish(step->object, cached);
      } else if (step->optional) {
        llvm::sys::fs::remove(step->object);
      } else {
        message = "(" + llvm::join(step->argv, " ") + ")";
        if (!program)
          message = "'" + step->argv.front() + "' is not on PATH " + message;
        if (!errorText.empty())
          message += ": " + errorText;
        if (auto output = llvm::MemoryBuffer::getFile(log))
          message += "\n" + (*output)->getBuffer().take_back(4000).str();
      }
      std::lock_guard<std::mutex> lock(mutex);
      if (rc == 0)
        ++result.compiled;
      if (!message.empty() && result.ok) {
        result.ok = false;
        result.error = message;
      }
      pending.erase(step->object);
      changed.notify_all();
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < std::min<size_t>(jobs, work.size()); ++t)
    threads.emplace_back(worker);
  for (std::thread &t : threads)
    t.join();
  return result;
}

std::vector<std::string> defaultPrebuiltKernelDirs() {
  std::vector<std::string> dirs;
  if (const char *env = std::getenv("THUNDER_PREBUILT_KERNELS")) {
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(env).split(parts, ':', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef part : parts)
      dirs.push_back(part.str());
    return dirs;
  }
#if defined(THUNDER_PREBUILT_KERNELS_BUILD_DIR) && defined(THUNDER_PREBUILT_KERNELS_INSTALL_DIR)
  for (llvm::StringRef dir :
       {THUNDER_PREBUILT_KERNELS_BUILD_DIR, THUNDER_PREBUILT_KERNELS_INSTALL_DIR})
    if (llvm::sys::fs::is_directory(dir))
      dirs.push_back(dir.str());
#endif
  return dirs;
}

} // namespace thunder
