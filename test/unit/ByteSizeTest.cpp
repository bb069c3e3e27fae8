//===- ByteSizeTest.cpp - Byte counts on command lines --------------------===//

#include "zero/Support/ByteSize.h"

#include <gtest/gtest.h>

using mlir::zero::parseByteSize;

TEST(ByteSize, UnitsArePowersOfTenOrTwo) {
  EXPECT_EQ(parseByteSize("40000000"), 40000000);
  EXPECT_EQ(parseByteSize("40MB"), 40000000);
  EXPECT_EQ(parseByteSize("40 mb"), 40000000);
  EXPECT_EQ(parseByteSize("1kB"), 1000);
  EXPECT_EQ(parseByteSize("2G"), 2000000000);
  EXPECT_EQ(parseByteSize("1KiB"), 1024);
  EXPECT_EQ(parseByteSize("38MiB"), 38 * 1024 * 1024);
  EXPECT_EQ(parseByteSize("1.5GiB"), 3 * 512 * 1024 * 1024);
  EXPECT_EQ(parseByteSize("12B"), 12);
  // Fractions of a byte round down.
  EXPECT_EQ(parseByteSize("1.7"), 1);
  EXPECT_EQ(parseByteSize("0"), 0);
}

TEST(ByteSize, RejectsWhatIsNotASize) {
  for (const char *text : {"", "MB", "-1", "1e3", "12parsecs", "1..5MB",
                           "1 M B", "99999999999GiB", "nan"})
    EXPECT_EQ(parseByteSize(text), std::nullopt) << text;
}
