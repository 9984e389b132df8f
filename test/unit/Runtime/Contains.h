// Substring assertions for the runtime's tests (GoogleTest without gmock).
#ifndef THUNDER_TEST_UNIT_RUNTIME_CONTAINS_H
#define THUNDER_TEST_UNIT_RUNTIME_CONTAINS_H

#include <gtest/gtest.h>

#include <string>

/// EXPECT_TRUE(contains(text, part)): prints both on failure.
inline ::testing::AssertionResult contains(const std::string &text, const std::string &part) {
  if (text.find(part) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' is not in:\n" << text;
}

inline ::testing::AssertionResult startsWith(const std::string &text, const std::string &prefix) {
  if (text.compare(0, prefix.size(), prefix) == 0)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not start with '" << prefix
                                       << "'";
}

#endif // THUNDER_TEST_UNIT_RUNTIME_CONTAINS_H
