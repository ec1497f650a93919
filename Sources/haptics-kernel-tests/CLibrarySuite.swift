// The C library as a C program uses it: docs/examples/play.c, compiled against a staged install of the library
// through pkg-config (scripts/capi-example), run against a virtual pad. It plays a pattern on the first pad
// (the pad records the uploads and plays), reports an invalid AHAP with the lines `haptics validate` prints,
// and gets its stopped callback when the pad is removed. Tests/CLibrary/unload.c, built beside it, checks that a
// host may dlclose the library while the threads of its engines wind down.
import Foundation
import Glibc
import HapticTestDevices
import LinuxInput

enum CLibrarySuite {
    static let suite: KernelTestSuite = KernelTestSuite(
        name: "capi", requires: [.uinput],
        tests: [
            KernelTest(name: "capi/example-plays-a-pattern-on-the-first-pad", body: playsAPattern),
            KernelTest(name: "capi/example-reports-an-invalid-ahap-as-validate-does", body: reportsAnInvalidPattern),
            KernelTest(name: "capi/example-gets-its-stopped-callback-when-the-pad-goes", body: stoppedWhenThePadGoes),
            KernelTest(
                name: "capi/dlclose-after-a-failed-create-and-a-destroy-leaves-the-host-running",
                body: unloadsWithoutCrashing),
        ])

    /// The compiled example: in the guest, in the folder scripts/kernel-tests copies into the working
    /// directory; where the tests run directly, in the build folder beside this runner's.
    static func example() throws -> String {
        let runner = projectBinary("haptics-kernel-tests")
        let runnerFolder = runner.lastIndex(of: "/").map { String(runner[..<$0]) } ?? "."
        let candidates = ["capi-example/play", "\(runnerFolder)/../capi-example/play"]
        guard let found = candidates.first(where: { access($0, X_OK) == 0 }) else {
            throw TestSkip(
                .cExample, "the C example is not built (\(candidates.joined(separator: ", "))): `make capi-example`")
        }
        return found
    }

    /// The unload check (Tests/CLibrary/unload.c) and the library copy beside it, which it loads with dlopen.
    static func unloadCheck() throws -> (program: String, library: String) {
        let play = try example()
        let folder = String(play[..<play.lastIndex(of: "/")!])
        let program = "\(folder)/unload"
        guard access(program, X_OK) == 0 else {
            throw TestSkip(.cExample, "the unload check is not built (\(program)): `make capi-example`")
        }
        let copies = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        guard let copy = copies.first(where: { $0.hasPrefix("liblinuxhaptics.so.") }) else {
            throw TestSkip(.cExample, "no liblinuxhaptics.so.MAJOR beside \(program): `make capi-example`")
        }
        return (program, "\(folder)/\(copy)")
    }

    /// A continuous rumble of `duration` seconds in a file any user may read.
    static func continuousPattern(_ duration: Double) throws -> String {
        let path = "/tmp/haptics-capi-\(duration).ahap"
        try writeFile(
            path,
            """
            {"Version": 1, "Pattern": [{"Event": {"Time": 0, "EventType": "HapticContinuous", "EventDuration": \
            \(duration), "EventParameters": [{"ParameterID": "HapticIntensity", "ParameterValue": 0.8}]}}]}
            """)
        return path
    }

    static func playsAPattern() async throws {
        let program = try example()
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics C example pad"))
        defer { pad.destroy() }
        let pattern = try continuousPattern(0.3)
        let play = try Subprocess([program, pattern])
        try requireEqual(play.finish(timeout: VirtualPadSuite.hangGuardSeconds), 0, "exit status:\n\(play.text)")
        try require(play.text.contains("playing \(pattern)"), "the example did not say what it played:\n\(play.text)")
        // Its exit closed the device, which erases its effects: everything it sent is recorded by then.
        let records = try await VirtualPadSuite.waitForRecords(pad, "the example's upload, play and erase") {
            $0.contains(where: EngineSuite.isNonZeroUpload) && EngineSuite.playsRumble($0)
                && $0.contains { $0.event == .erase }
        }
        let uploads = records.filter { $0.event == .upload }
        try require(
            uploads.allSatisfy { $0.retval == 0 }, "a refused upload: \(records.map(EngineSuite.recordSummary))")
        print("  \(uploads.count) uploads, \(records.filter { $0.event == .play }.count) plays")
    }

    static func reportsAnInvalidPattern() async throws {
        let program = try example()
        let path = "/tmp/haptics-capi-invalid.ahap"
        try writeFile(
            path,
            """
            {"Version": 1, "Pattern": [{"Event": {"Time": 0, "EventType": "HapticTransient",
              "EventParameters": [{"ParameterID": "HapticIntensity", "ParameterValue": "loud"}]}}]}
            """)
        let play = try Subprocess([program, path])
        try requireEqual(play.finish(timeout: VirtualPadSuite.hangGuardSeconds), 1, "exit status:\n\(play.text)")
        let validate = try Subprocess([projectBinary("haptics"), "validate", path])
        _ = validate.finish(timeout: VirtualPadSuite.hangGuardSeconds)
        let errors = validate.text.split(separator: "\n").filter { $0.contains(": error: ") }
        try require(!errors.isEmpty, "haptics validate found no error:\n\(validate.text)")
        for line in errors {
            try require(play.text.contains(line), "the example does not print validate's line \(line):\n\(play.text)")
        }
        try require(
            play.text.contains("Pattern[0].Event.EventParameters[0].ParameterValue"),
            "the JSON path is missing:\n\(play.text)")
    }

    static func stoppedWhenThePadGoes() async throws {
        let program = try example()
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics C example unplugged pad"))
        defer { pad.destroy() }
        let play = try Subprocess([program, "--wait-for-stop", try continuousPattern(2)])
        try await VirtualPadSuite.waitForRecords(pad, "the example's first rumble") {
            $0.contains(where: EngineSuite.isNonZeroUpload) && EngineSuite.playsRumble($0)
        }
        pad.destroy()
        let stopped = play.read(until: { $0.contains("stopped: ") }, timeout: VirtualPadSuite.hangGuardSeconds)
        try require(stopped, "no stopped callback after the pad was removed:\n\(play.text)")
        try require(
            play.text.contains("stopped: gameControllerDisconnect"),
            "the callback's reason is not the unplug:\n\(play.text)")
        try requireEqual(play.finish(timeout: VirtualPadSuite.hangGuardSeconds), 0, "exit status:\n\(play.text)")
    }

    /// A plug-in host's way: the library loaded with dlopen, an engine made on a missing device (which fails,
    /// after starting a hot-plug watch) and one played on and destroyed, then dlclose while those threads wind
    /// down. The library stays loaded (NODELETE), so the program keeps running and ends normally.
    static func unloadsWithoutCrashing() async throws {
        let (program, library) = try unloadCheck()
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics C unload pad"))
        defer { pad.destroy() }
        let run = try Subprocess([program, library])
        try requireEqual(run.finish(timeout: VirtualPadSuite.hangGuardSeconds), 0, "exit status:\n\(run.text)")
        try require(run.text.contains("unloaded"), "the program did not get past dlclose:\n\(run.text)")
    }
}
