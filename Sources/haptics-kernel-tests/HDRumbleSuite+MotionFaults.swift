// A fault at each call site of the Switch controller's motion node, which the engine reads for the times of the
// pad's input reports (`InputReportReader`) so that it plans on hid-nintendo's frames: its open, its clock ioctl,
// and its reads (the first, and every one from a pattern's third on), each with every errno the faults suite
// uses. The motion node is optional: whatever fails, the engine starts, plays a tone that reaches the pad and ends
// at rest, and leaves no descriptor open once stopped. A failed open or clock ioctl plans the pad without its
// frames (`switch`, logged); reads that fail from mid-pattern on leave the frames stale, and the rest is planned by
// the write budget.
import Foundation
import Glibc
import HapticRendering
import HapticTestDevices
import LinuxHaptics
import LinuxHapticsTesting
import LinuxInput
import Logging
@_spi(Internals) import LinuxSystem

extension HDRumbleSuite {
    static let motionFaultTests = [
        KernelTest(name: "hd/switch-pro/motion-node-faults-plan-without-frames-play-and-leave-nothing-open") {
            try await motionNodeFaults()
        }
    ]

    /// One fault: a site of the motion node, the calls of it that fail, and what the engine plans with.
    private struct MotionFault {
        let site: String
        let calls: SyscallFaults.Calls
        /// The motion node's path, for the open (the engine opens other nodes too).
        let matching: String?
        /// Whether the plan is armed once the engine started (its calls counted from then), not before.
        var duringTone = false
        /// Whether the engine still plans on the frames when the call fails with `errno`.
        let keepsFrames: (Errno) -> Bool
    }

    static func motionNodeFaults() async throws {
        try await EngineSuite.warmUpRuntime()
        try await EmulationSuite.withController(.switchPro) { device, nodes in
            let event = "/sys/class/input/" + (nodes.rumbleNode as NSString).lastPathComponent
            guard let motion = InputReportReader.motionNode(besideEvent: event) else {
                throw TestFailure(reason: "the Pro Controller at \(nodes.rumbleNode) has no motion node")
            }
            // One run first, its profile unchecked: under emulation the first run of the engine's code in a process
            // is slow, and the emulated pad's reports, served by a thread of this process, can come unevenly enough
            // for the engine to find no certain frames (seen once in a first run, never after).
            let first = try await run(nil, on: device, nodes.rumbleNode)
            if first.profile.name != RenderProfile.switchProOnFrames.name {
                print("    the first run planned with \(first.profile.name): \(first.log.entries.map(\.message))")
            }
            // A run without a fault: the frames are followed.
            var reruns: [String] = []
            let dry = try await runOnFrames(nil, on: device, nodes.rumbleNode, reruns: &reruns)
            try require(
                dry.profile.name == RenderProfile.switchProOnFrames.name,
                "without a fault the engine plans with \(dry.profile.name); the emulated pad's reports while it "
                    + "looked came late by at most \(dry.reportsLate.max() ?? 0) ms; its log: "
                    + "\(dry.log.entries.map(\.message))")
            let faults = [
                MotionFault(site: "open", calls: .nth(1), matching: motion) { $0 == .interrupted },
                MotionFault(site: "ioctl(EVIOCSCLOCKID)", calls: .nth(1), matching: nil) { $0 == .interrupted },
                // Its first read fails: the next one, 5 ms later, reads what was queued.
                MotionFault(site: "read(reports)", calls: .nth(1), matching: nil) { _ in true },
                // Every read from the tone's third on, armed once the engine started on the frames.
                MotionFault(site: "read(reports)", calls: .from(3), matching: nil, duringTone: true) { _ in true },
            ]
            var lines: [String] = []
            for fault in faults {
                var outcomes: [String] = []
                // An interrupted call is made again: failing every call from one on would never end.
                for (name, errno) in FaultSuite.errnos where !(errno == .interrupted && fault.calls != .nth(1)) {
                    let plan = SyscallFaults.Plan(
                        site: fault.site, errno: errno, calls: fault.calls, matching: fault.matching)
                    let result =
                        fault.keepsFrames(errno)
                        ? try await runOnFrames(
                            plan, duringTone: fault.duringTone, on: device, nodes.rumbleNode, reruns: &reruns)
                        : try await run(plan, duringTone: fault.duringTone, on: device, nodes.rumbleNode)
                    let what = "\(fault.site) \(fault.calls) \(name)"
                    // The profile first: an engine that planned without the frames for another reason reads no
                    // reports during the tone, and the fault armed for those reads never fires; that names why.
                    try require(
                        (result.profile.name == RenderProfile.switchProOnFrames.name) == fault.keepsFrames(errno)
                            && [RenderProfile.switchProOnFrames.name, RenderProfile.switchPro.name].contains(
                                result.profile.name),
                        "\(what): the engine planned with \(result.profile.name); the emulated pad's reports while it "
                            + "looked came late by at most \(result.reportsLate.max() ?? 0) ms; its log: "
                            + "\(result.log.entries.map(\.message))")
                    try require(
                        result.tally.injected > 0,
                        "\(what): the fault never fired; the calls while it was armed: \(result.tally.calls)")
                    if result.profile.name == RenderProfile.switchPro.name {
                        try require(
                            result.log.contains("its rumble is planned without"),
                            "\(what): planned without the frames, and the log does not say so")
                    }
                    let reads = fault.site == "read(reports)" ? " (\(result.tally.calls[fault.site] ?? 0) reads)" : ""
                    outcomes.append("\(name) \(result.profile.name)\(reads)")
                }
                lines.append("\(fault.site) \(fault.calls): " + outcomes.joined(separator: ", "))
            }
            print("    " + lines.joined(separator: "; "))
            if !reruns.isEmpty {
                print(
                    "    run again, the emulated pad's reports having given no certain frames: "
                        + reruns.joined(separator: "; "))
            }
        }
    }

    private struct MotionRun {
        let profile: RenderProfile
        let tally: SyscallFaults.Tally
        let log: RecordingLog
        /// The emulated pad's streamed reports from the engine's start to its profile, each as late as it was sent
        /// after it was due, in milliseconds.
        let reportsLate: [Double]

        /// Whether the engine read the reports and found them too uneven for certain frames (the node was opened
        /// and read, so no fault of its open, clock or reads kept the engine off them), and the emulated pad's own
        /// log shows it sent a report late by more than `lateReportMilliseconds` while the engine looked: the
        /// unevenness was the emulator's, which the kernel stamps as it is written.
        var foundNoCertainFramesInLateReports: Bool {
            profile.name == RenderProfile.switchPro.name && log.contains("give no certain frames")
                && !log.contains("cannot be read") && reportsLate.contains { $0 > lateReportMilliseconds }
        }
    }

    /// How late a streamed report may come and count as on time here: a fifth of the pad's 15 ms period, the share
    /// of a period the engine's frame pacing allows a report's place (`FramePacing`'s slack).
    private static let lateReportMilliseconds = 3.0

    /// `run`, made again (at most twice) when the engine read the reports and found no certain frames in them, and
    /// the emulated pad had sent some of them late (`foundNoCertainFramesInLateReports`): its reports are written
    /// by a thread of this process, and a guest whose processor the host takes away for a while (two guests on two
    /// cores) sends them late. That is the emulator's timing, not the fault under test. Reports all on time and no
    /// certain frames fail the case. Each run made again is named in `reruns`, with how late the reports were.
    private static func runOnFrames(
        _ plan: SyscallFaults.Plan?, duringTone: Bool = false, on device: any EmulatedDevice, _ node: String,
        reruns: inout [String]
    ) async throws -> MotionRun {
        var result = try await run(plan, duringTone: duringTone, on: device, node)
        for _ in 0..<2 where result.foundNoCertainFramesInLateReports {
            let what = plan.map { "\($0.site) \($0.calls) \($0.errno)" } ?? "no fault"
            let late = result.reportsLate
            reruns.append(
                "\(what): \(late.count) reports, late by at most "
                    + "\(late.max().map { String(format: "%.1f", $0) } ?? "-") ms")
            result = try await run(plan, duringTone: duringTone, on: device, node)
        }
        return result
    }

    /// An engine on the pad's rumble node with `plan` armed from before its start (or, `duringTone`, from once it
    /// started) to after a 300 ms tone: it must start, the tone reach the pad and end at rest, and nothing stay open
    /// once it stopped.
    private static func run(
        _ plan: SyscallFaults.Plan?, duringTone: Bool = false, on device: any EmulatedDevice, _ node: String
    ) async throws -> MotionRun {
        let baseline = openDescriptors()
        let log = RecordingLog()
        var logger = log.logger
        logger.logLevel = .info
        var options = HapticEngineOptions()
        options.actuators = .rumble
        options.playsHapticsOnly = true
        let engine = HapticEngine(output: .device(.node(node)), options: options, logger: logger)
        let what = plan.map { "\($0.site) \($0.calls) \($0.errno)" } ?? "no fault"
        let before = device.records().count
        let started = PadTimestamp(microseconds: Int64(Sys.monotonicNanoseconds() / 1000))
        SyscallFaults.arm(duringTone ? nil : plan)
        let tally: SyscallFaults.Tally
        let profile: RenderProfile
        let planned: PadTimestamp
        do {
            defer { engine.stop() }
            // Disarmed whatever fails below: an armed fault would fail the calls of every test after this one.
            defer { _ = SyscallFaults.disarm() }
            do {
                try engine.start()
            } catch {
                SyscallFaults.disarm()
                throw TestFailure(reason: "\(what): the engine did not start: \(error)")
            }
            profile = engine.renderProfile
            planned = PadTimestamp(microseconds: Int64(Sys.monotonicNanoseconds() / 1000))
            if duringTone { SyscallFaults.arm(plan) }
            try await VoiceCoilSuite.play(AHAPFixtures.tone(seconds: 0.3, intensity: 0.8), on: engine)
            tally = SyscallFaults.disarm()
        }
        try await Task.sleep(for: .milliseconds(250))
        let frames = device.records().dropFirst(before).filter { $0.event == .output }
        try require(frames.contains { ($0.strong ?? 0) > 0.5 }, "\(what): the tone never reached the pad")
        try require(frames.last.map { ($0.strong ?? 0) == 0 && ($0.weak ?? 0) == 0 } == true, "\(what): not at rest")
        let left = openDescriptors().filter { baseline[$0.key] == nil && $0.value.hasPrefix("/dev/input/") }
        try require(left.isEmpty, "\(what): descriptors left open after stop: \(left.values.sorted())")
        let late = device.inputReports().filter { $0.due >= started && $0.due <= planned }.map {
            Double($0.sent.microseconds - $0.due.microseconds) / 1000
        }
        return MotionRun(profile: profile, tally: tally, log: log, reportsLate: late)
    }
}
