// Processes that die, hang or share a pad, seen from the pad: a `haptics play` killed (SIGKILL) or stopped
// (SIGSTOP) mid-rumble, two of them on one pad, and the node's permissions revoked while one plays. What the
// motors do comes from the pad's records replayed through the ff-memless model; the times printed are
// measurements, the assertions are about what the pad was told.
import Foundation
import Glibc
import HapticRendering
import HapticTestDevices
import LinuxInput

enum ProcessSuite {
    static let suite: KernelTestSuite = KernelTestSuite(
        name: "process", requires: [.uinput],
        tests: [
            KernelTest(name: "process/sigkill-mid-rumble-stops-the-motors", body: killMidRumble),
            KernelTest(name: "process/sigstop-mid-rumble-self-expires", body: stopMidRumble),
            KernelTest(name: "process/two-processes-share-a-pad", body: twoProcesses),
            KernelTest(name: "process/permission-revoked-while-playing", body: permissionRevoked),
            KernelTest(
                name: "process/a-wait-a-replay-and-a-play-end-on-sigint-sigterm-sighup-with-the-signals-status",
                body: signalsEndEveryPlayingCommand),
            KernelTest(
                name: "process/a-play-waiting-for-a-pad-starts-when-its-permissions-are-set-after-it-appeared",
                body: permissionGrantedAfterTheAdd),
        ])

    /// The longest the engine's effects may hold a level without a renewal: its fixed replay length.
    static let selfExpiryMilliseconds: UInt16 = 150

    /// A steady rumble (two seconds unless told), readable by any user.
    static func steadyPattern(seconds: Double = 2) throws -> String {
        let path = "/tmp/haptics-steady-\(seconds).ahap"
        let text = """
            {"Pattern": [{"Event": {"Time": 0, "EventType": "HapticContinuous", "EventDuration": \(seconds),
              "EventParameters": [{"ParameterID": "HapticIntensity", "ParameterValue": 0.8},
                                  {"ParameterID": "HapticSharpness", "ParameterValue": 0.5}]}}]}
            """
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            chmod(path, 0o644)
        } catch {
            throw TestFailure(reason: "writing \(path): \(error)")
        }
        return path
    }

    /// `haptics play --json` of the steady pattern on `pad`, looping until signalled, once it drives the pad.
    static func rumblingPlay(on pad: VirtualPad) async throws -> Subprocess {
        let play = try Subprocess(
            [projectBinary("haptics"), "play", "--json", "--loop", "0", "--device", pad.eventNode, try steadyPattern()])
        try await VirtualPadSuite.waitForRecords(pad, "the play's first rumble") { records in
            // A play of the rumble, not of the keeper (played first, at 0).
            records.contains(where: EngineSuite.isNonZeroUpload) && EngineSuite.playsRumble(records)
        }
        return play
    }

    /// When, after `time`, the pad's modelled motors first run at 0; nil if they never do. The model places a
    /// change at the start of its kernel tick, so a change in `time`'s own tick counts (as at that tick's start).
    static func motorsOff(on pad: VirtualPad, after time: PadTimestamp) -> PadTimestamp? {
        let end = PadTimestamp(microseconds: time.microseconds + 10_000_000)
        let tick = PadTimestamp(
            microseconds: time.microseconds / EngineSuite.tickMicroseconds * EngineSuite.tickMicroseconds)
        return pad.motorModel().timeline(until: end).first { $0.time >= tick && $0.levels.isOff }?.time
    }

    static func now() -> PadTimestamp { PadTimestamp(seconds: monotonicSeconds()) }

    static func milliseconds(from start: PadTimestamp, to end: PadTimestamp) -> String {
        String(format: "%.1f ms", Double(end.microseconds - start.microseconds) / 1000)
    }

    static func killMidRumble() async throws {
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics kill pad"))
        defer { pad.destroy() }
        let play = try await rumblingPlay(on: pad)
        let killed = now()
        play.signal(SIGKILL)
        try requireEqual(play.finish(timeout: VirtualPadSuite.hangGuardSeconds), 128 + SIGKILL, "status after SIGKILL")
        // Closing the dead process's descriptor makes the kernel stop and erase each of its effects.
        try await VirtualPadSuite.waitForRecords(pad, "the kernel's erase on close") { records in
            records.contains { $0.event == .erase && $0.time >= killed }
        }
        let after = pad.records().filter { $0.time >= killed }
        try require(
            !after.contains { $0.event == .upload || $0.event == .play },
            "nothing may drive the pad after the kill: \(after.map(EngineSuite.recordSummary))")
        guard let off = motorsOff(on: pad, after: killed) else {
            throw TestFailure(reason: "the motors never stopped: \(after.map(EngineSuite.recordSummary))")
        }
        print("  SIGKILL to motors at 0: \(milliseconds(from: killed, to: off)) (the kernel's stop on close)")
    }

    static func stopMidRumble() async throws {
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics hang pad"))
        defer { pad.destroy() }
        let play = try await rumblingPlay(on: pad)
        let stopped = now()
        play.signal(SIGSTOP)
        // Long enough for any replay window to run out; the check below is on the records, not this wait.
        try await Task.sleep(for: .milliseconds(600))
        let records = pad.records()
        // The keeper (a rumble at 0, endless) moves no motor; every other effect must end on its own.
        let keepers = EngineSuite.keeperIDs(records)
        let lengths = Set(
            records.filter { $0.event == .upload && !keepers.contains($0.id ?? -1) }.compactMap {
                $0.effect?.replayLength
            })
        try require(
            lengths.allSatisfy { $0 > 0 && $0 <= selfExpiryMilliseconds },
            "every effect but the keeper must self-expire within \(selfExpiryMilliseconds) ms; replay lengths "
                + "\(lengths.sorted())")
        // The last renewal: a play, or an update in place (ff-memless restarts the replay window at it).
        guard let lastPlay = records.last(where: { $0.event == .play || ($0.event == .upload && $0.replacing == true) })
        else {
            throw TestFailure(reason: "no play recorded")
        }
        guard let off = motorsOff(on: pad, after: lastPlay.time) else {
            throw TestFailure(
                reason: "the motors never stopped after the last renewal at \(lastPlay.time): "
                    + "\(records.suffix(12).map(EngineSuite.recordSummary)); the model's changes "
                    + "\(pad.motorModel().timeline(until: ProcessSuite.now()).suffix(6))")
        }
        let tick = 4_000
        try require(
            off.microseconds - lastPlay.time.microseconds <= Int64(selfExpiryMilliseconds) * 1000 + Int64(2 * tick),
            "motors at 0 only \(milliseconds(from: lastPlay.time, to: off)) after the last renewal")
        print("  SIGSTOP to motors at 0: \(milliseconds(from: stopped, to: off)) (self-expiry)")
        // The stopped process resumes and plays on; SIGINT then ends it cleanly.
        let resumed = now()
        play.signal(SIGCONT)
        try await VirtualPadSuite.waitForRecords(pad, "a renewal after SIGCONT") { records in
            records.contains { $0.event == .play && $0.time >= resumed }
        }
        play.signal(SIGINT)
        try requireEqual(
            play.finish(timeout: VirtualPadSuite.hangGuardSeconds), 128 + SIGINT, "status after SIGINT:\n\(play.text)")
        try require(pad.motorModel().output(at: now()).isOff, "the motors run after the interrupted play ended")
    }

    static func twoProcesses() async throws {
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics shared pad"))
        defer { pad.destroy() }
        let pattern = try steadyPattern()
        let players = try (0..<2).map { _ in
            try Subprocess([projectBinary("haptics"), "play", "--json", "--device", pad.eventNode, pattern])
        }
        for (index, player) in players.enumerated() {
            let status = player.finish(timeout: VirtualPadSuite.hangGuardSeconds)
            try requireEqual(status, 0, "status of player \(index + 1):\n\(player.text)")
        }
        let uploads = pad.records().filter { $0.event == .upload }
        try require(
            uploads.allSatisfy { $0.retval == 0 }, "a refused upload: \(uploads.map(EngineSuite.recordSummary))")
        let slots = Set(uploads.filter(EngineSuite.isNonZeroUpload).compactMap(\.id))
        try requireEqual(slots.count, 2, "slots driven (one per process)")
        // Both ran at once, each through its own slot: the kernel sums them.
        let single = ForceFeedbackEffect.fraction(
            uploads.compactMap { record -> UInt16? in
                if case .rumble(let strong, _)? = record.effect?.kind { strong } else { nil }
            }.max() ?? 0)
        let peak = pad.motorModel().timeline(until: now()).map(\.levels.strong).max() ?? 0
        try require(peak > single, "the two processes' rumbles never overlapped (peak \(peak), one \(single))")
        try require(pad.motorModel().output(at: now()).isOff, "the motors run after both processes ended")
    }

    /// Ctrl-C, SIGTERM and SIGHUP end a playing command on its normal path, whatever it is doing: an `interrupted`
    /// event, the motors at rest, and the status a shell reports for the signal (128 and its number). A `--wait`
    /// for a pad that is not there, started with SIGINT ignored (as `cmd &` in a script is), ends on SIGINT: it
    /// waited on before 6 December, the signal's default action being all it had. A replay ends on SIGTERM with
    /// 143 (the signal's default action, with no `interrupted` event), and a play on SIGHUP with 129 (its handler
    /// took only SIGINT and SIGTERM, and gave 130 for both).
    static func signalsEndEveryPlayingCommand() async throws {
        let haptics = projectBinary("haptics")
        let waiting = try Subprocess([
            "sh", "-c", "trap '' INT; exec \(haptics) play --json --wait --device /dev/input/event99 Haptics/thud.ahap",
        ])
        try require(
            waiting.read(until: { $0.contains("waiting for") }, timeout: VirtualPadSuite.hangGuardSeconds),
            "the play never said it waits:\n\(waiting.text)")
        waiting.signal(SIGINT)
        try requireEqual(
            waiting.finish(timeout: VirtualPadSuite.hangGuardSeconds), 128 + SIGINT,
            "status of the wait after SIGINT:\n\(waiting.text)")
        try require(waiting.text.contains(#""event":"interrupted""#), "no interrupted event:\n\(waiting.text)")

        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics signalled pad"))
        defer { pad.destroy() }
        let runs: [(arguments: [String], startedBy: String, signal: Int32)] = [
            (["replay", "--json", "--device", pad.eventNode], #""event":"cue""#, SIGTERM),
            (["play", "--json", "--loop", "0", "--device", pad.eventNode, try steadyPattern()], "started", SIGHUP),
        ]
        for (arguments, startedBy, signal) in runs {
            let run = try Subprocess([haptics] + arguments)
            try require(
                run.read(until: { $0.contains(startedBy) }, timeout: VirtualPadSuite.hangGuardSeconds),
                "haptics \(arguments[0]) never started:\n\(run.text)")
            try await VirtualPadSuite.waitForRecords(pad, "a rumble from haptics \(arguments[0])") {
                $0.contains(where: EngineSuite.isNonZeroUpload)
            }
            run.signal(signal)
            try requireEqual(
                run.finish(timeout: VirtualPadSuite.hangGuardSeconds), 128 + signal,
                "status of haptics \(arguments[0]) after signal \(signal):\n\(run.text)")
            try require(
                run.text.contains(#""event":"interrupted""#), "no interrupted event from \(arguments[0]):\n\(run.text)")
            try require(
                pad.motorModel().output(at: now()).isOff, "the motors run after haptics \(arguments[0]) ended")
        }
    }

    /// Without a udev daemon the pad's node is made for root alone and its permissions are set afterwards (by mdev,
    /// or a script), which no uevent tells. A `haptics play --wait` run as `nobody` waits through the pad's
    /// appearance (it cannot open it yet) and plays once the node is opened up. Until 6 December it waited on
    /// forever. A monitor run as nobody says when the pad was added, so that the change of permissions comes after.
    static func permissionGrantedAfterTheAdd() async throws {
        let configuration = VirtualPadConfiguration(name: "Haptics late permission pad")
        // The pad's stable id, from a first pad of the same configuration: the waiting play names it.
        let first = try VirtualPadSuite.makePad(configuration)
        let id = try DeviceSuite.probe(first.eventNode).id
        first.destroy()
        let monitor = try Subprocess(
            ["su", "-s", "/bin/sh", "nobody", "-c", "\(projectBinary("haptics")) monitor --json --source kernel"])
        defer {
            monitor.signal(SIGTERM)
            _ = monitor.finish(timeout: VirtualPadSuite.hangGuardSeconds)
        }
        let command = [
            projectBinary("haptics"), "play", "--json", "--wait", "--device", id, try steadyPattern(seconds: 0.3),
        ]
        let play = try Subprocess(["su", "-s", "/bin/sh", "nobody", "-c", command.joined(separator: " ")])
        // On a failure before its end: killed (a finished play is left as it is).
        defer { _ = play.finish(timeout: 0) }
        try require(
            play.read(until: { $0.contains("waiting for") }, timeout: VirtualPadSuite.hangGuardSeconds)
                && monitor.read(
                    until: { $0.contains("watching input devices") }, timeout: VirtualPadSuite.hangGuardSeconds),
            "the play never said it waits, or the monitor never listened:\n\(play.text)\n\(monitor.text)")
        let pad = try VirtualPadSuite.makePad(configuration)
        defer { pad.destroy() }
        try require(
            monitor.read(
                until: { text in
                    DeviceSuite.monitorLines(text).contains { $0.node == pad.eventNode && $0.event == "added" }
                }, timeout: VirtualPadSuite.hangGuardSeconds),
            "the pad was never added:\n\(monitor.text)")
        let added = DeviceSuite.monitorLines(monitor.text).first { $0.node == pad.eventNode }
        try requireEqual(added?.access, "denied", "nobody's access to the new node (a udev daemon runs?)")
        try require(chmod(pad.eventNode, 0o666) == 0, "chmod 666: \(String(cString: strerror(errno)))")
        try requireEqual(
            play.finish(timeout: VirtualPadSuite.hangGuardSeconds), 0, "status of the waiting play:\n\(play.text)")
        try require(
            pad.records().contains(where: EngineSuite.isNonZeroUpload), "the pad never got a rumble: \(play.text)")
        try require(pad.motorModel().output(at: now()).isOff, "the motors run after the play ended")
    }

    static func permissionRevoked() async throws {
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics permission pad"))
        defer { pad.destroy() }
        let node = pad.eventNode
        chmod(node, 0o666)
        let pattern = try steadyPattern()
        let command = [projectBinary("haptics"), "play", "--json", "--loop", "2", "--device", node, pattern]
        let play = try Subprocess(["su", "-s", "/bin/sh", "nobody", "-c", command.joined(separator: " ")])
        try await VirtualPadSuite.waitForRecords(pad, "nobody's first rumble") {
            $0.contains(where: EngineSuite.isNonZeroUpload)
        }
        let revoked = now()
        chmod(node, 0o600)
        // Access is checked when a node is opened: the open descriptor plays on to the end.
        try requireEqual(play.finish(timeout: VirtualPadSuite.hangGuardSeconds), 0, "status of the play:\n\(play.text)")
        try require(
            pad.records().contains { $0.event == .play && $0.time >= revoked },
            "the open descriptor stopped driving the pad when the node's permissions changed")
        let again = try Subprocess(["su", "-s", "/bin/sh", "nobody", "-c", command.joined(separator: " ")])
        let status = again.finish(timeout: VirtualPadSuite.hangGuardSeconds)
        try require(status != 0, "a new play as nobody should be refused:\n\(again.text)")
        try require(
            again.text.contains("ermission") && again.text.contains("haptics devices"),
            "the refusal should name the cause and the fix:\n\(again.text)")
    }
}
