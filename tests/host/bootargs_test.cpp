// The kernel's boot arguments: the cluster secret is usable until the key is derived, then gone
// from everything the kernel keeps (raw(), redacted(), cluster_secret()), while every other
// argument still reads as it was.
#include <kernel/bootargs.h>

#include <gtest/gtest.h>

#include <string>

namespace {

const std::string kArgs =
    "quiet node=n1 cluster=swarm cluster_key=hunter2-hunter2 key=admin:root:s3cret peers=10.10.0.2";

std::string redacted_text() {
    char out[512];
    bootargs::redacted(out, sizeof out);
    return out;
}

} // namespace

TEST(Bootargs, ClusterSecretIsForgottenOnceUsed) {
    std::string source = kArgs; // where the firmware put them
    bootargs::parse(source);
    EXPECT_EQ(bootargs::cluster_secret(), "hunter2-hunter2");
    EXPECT_EQ(redacted_text().find("hunter2"), std::string::npos) << "never printed";

    bootargs::forget_cluster_secret();
    EXPECT_EQ(bootargs::cluster_secret(), "");
    EXPECT_EQ(std::string(bootargs::raw()).find("hunter2"), std::string::npos) << std::string(bootargs::raw());
    EXPECT_NE(std::string(bootargs::raw()).find("cluster_key=***************"), std::string::npos);
    EXPECT_EQ(redacted_text().find("hunter2"), std::string::npos);
    // The rest is untouched, including values parsed into views before the secret was wiped.
    EXPECT_EQ(bootargs::get().cluster, "swarm");
    EXPECT_EQ(bootargs::get().node, "n1");
    EXPECT_EQ(bootargs::get().peers, "10.10.0.2");
    EXPECT_TRUE(bootargs::get().quiet);
    EXPECT_EQ(source, kArgs) << "parsed from a copy: the original is not written";
}

TEST(Bootargs, EveryClusterKeyTokenIsWiped) {
    bootargs::parse("cluster_key=first-secret x=1 cluster_key=second-secret");
    bootargs::forget_cluster_secret();
    const std::string raw(bootargs::raw());
    EXPECT_EQ(raw.find("secret"), std::string::npos) << raw;
    EXPECT_EQ(raw.size(), std::string("cluster_key=first-secret x=1 cluster_key=second-secret").size());
}
