// The side-by-side bench with SDL (`make bench-peers`) in small: `haptics-bench --peers --smoke` plays one pattern
// (the corpus's when AHAP_CORPUS names it, otherwise an AHAP fixture) through SDL2's rumble and haptic APIs
// (peers/sdl-peer.c) and through our engine on a virtual pad, and must measure every figure on both sides. It
// needs systemd-udevd (SDL finds game controllers through udev's properties), so scripts/kernel-tests runs it in the
// guest with the daemon.
import Foundation
import Glibc
import HapticTestDevices
import LinuxInput

enum PeerSuite {
    static let suite: KernelTestSuite = KernelTestSuite(
        name: "peers", requires: [.uinput, .uhid],
        tests: [
            KernelTest(name: "peers/sdl-and-ours-side-by-side-smoke-under-udevd", body: smoke)
        ])

    static func smoke() async throws {
        guard access("/run/udev/control", F_OK) == 0 else {
            throw TestSkip(.udevd, "no udev daemon runs here (run the VM with --udevd)")
        }
        let runnerFolder = (projectBinary("haptics-kernel-tests") as NSString).deletingLastPathComponent
        guard onPath("sdl-peer") || access("\(runnerFolder)/../peers/sdl-peer", X_OK) == 0 else {
            throw TestSkip(.sdlPeer, "no sdl-peer on PATH or in the build folder (make peers)")
        }
        _ = try CLibrarySuite.example()
        let bench = try Subprocess([projectBinary("haptics-bench"), "--peers", "--smoke"])
        let status = bench.finish(timeout: 300)
        let summary = bench.text.split(separator: "\n").last { $0.hasPrefix("peers: latency-p50-") }
        try require(status == 0, "haptics-bench --peers --smoke exited \(status):\n\(bench.text)")
        try require(summary != nil, "no summary line:\n\(bench.text)")
        // Every ratio a number (three latency pairs at p50 and p99, each with its worst device after '@',
        // fidelity and writes against SDL's better API and against its haptic API, CPU), and both sides measured idle (OURS/SDL): '-' is a figure one side did not get.
        let values = (summary?.split(separator: " ").dropFirst() ?? []).map { $0.split(separator: "=").last ?? "" }
        let numbers = values.flatMap { $0.split(separator: "@").first?.split(separator: "/") ?? [] }.map { Double($0) }
        try require(
            values.count == 12 && numbers.count == 13 && numbers.allSatisfy { $0?.isFinite == true },
            "a figure is missing: \(summary ?? "")\n\(bench.text)")
        print(summary ?? "")
    }
}
