//===- FusionRules.cpp - (being written) ----------------------------------===//
