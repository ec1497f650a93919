// The virtual pad's motor model against the kernel's own ff-memless. The virtual pad is a uinput device: no
// ff-memless runs behind it, and `MotorModel` computes from its records what ff-memless would make of them. An
// emulated DualSense is bound by hid-playstation, which does run on ff-memless: the same uploads, plays, updates,
// gain changes and stops sent to both must give the same motor levels over time. And the scenarios that rely
// on the model (a process stopped mid-rumble, two processes on one pad) run again on the DualSense, where the
// kernel decides.
import Foundation
import Glibc
import HapticRendering
import HapticTestDevices
import LinuxInput

enum FFMemlessSuite {
    static let suite: KernelTestSuite = KernelTestSuite(
        name: "ff-memless", requires: [.uinput, .uhid],
        tests: [
            KernelTest(name: "ff-memless/dualsense-levels-over-time-match-the-motor-model") {
                try await againAfterTheUpdateRace { try await StallWitness.againAfterAGuestStall(modelMatchesKernel) }
            },
            KernelTest(name: "ff-memless/dualsense-sigstop-mid-rumble-self-expires", body: stopMidRumble),
            KernelTest(name: "ff-memless/dualsense-two-processes-sum-on-one-controller", body: twoProcesses),
            KernelTest(name: "ff-memless/dualsense-a-prepared-tap-hands-over-to-the-mix-never-summed") {
                try await StallWitness.againAfterAGuestStall(preparedTapHandsOver)
            },
        ] + keeperTests)

    /// One kernel tick (`EngineSuite.tickMicroseconds`, 4 ms): the model counts ticks from CLOCK_MONOTONIC's
    /// zero, the kernel's jiffies have a phase of their own, so a change the model places in one tick may happen
    /// in the kernel's tick before.
    static let jiffyMicroseconds = EngineSuite.tickMicroseconds
    /// ff-memless's envelope interval (`FF_ENVELOPE_INTERVAL`, 50 ms): its longest timer step. hid-playstation
    /// sends the levels ff-memless decides from a work item, through uhid to this process, so a change reaches
    /// the record later than the kernel decided it; within this step it is the same change.
    static let timerStepMicroseconds: Int64 = 50_000

    /// One motor level on hid-playstation's scale: ff-memless's 16-bit magnitude divided by 256.
    struct Level: Equatable, CustomStringConvertible {
        var strong: Int
        var weak: Int
        var description: String { "(\(strong),\(weak))" }
    }

    /// A level and from when it holds.
    struct Change: CustomStringConvertible {
        var time: PadTimestamp
        var level: Level
        var description: String { "\(level)@\(time.microseconds / 1000)ms" }
    }

    // MARK: The same requests, two ff-memless: the kernel's and the model

    /// What the script does, one step at a time, to a client; `ids` are the slots the client got, by upload.
    /// Each step leaves a level that holds for its pause (or changes on ff-memless's timer within it), so that
    /// no two changes fall closer than the driver's work item can tell apart.
    static var steps: [(pause: Int, act: (RawClient, inout [Int16]) throws(ClientError) -> Void)] {
        [
            // A rumble with a replay length: played, then ended by ff-memless's timer.
            (
                300,
                { client, ids throws(ClientError) in
                    ids.append(try client.uploadRumble(strong: 0x8000, weak: 0x2000, length: 200))
                    try client.play(ids[0])
                }
            ),
            // An endless one.
            (
                150,
                { client, ids throws(ClientError) in
                    ids.append(try client.uploadRumble(strong: 0x4000, weak: 0xc000))
                    try client.play(ids[1])
                }
            ),
            // Updated in place while it plays: ff-memless restarts it on its next tick.
            (
                150,
                { client, ids throws(ClientError) in
                    try client.uploadRumble(strong: 0xc000, weak: 0x4000, id: ids[1])
                }
            ),
            // The gain scales it.
            (150, { client, _ throws(ClientError) in try client.setGain(0x8000) }),
            // A delayed, repeated rumble on top: summed with the endless one twice, 100 ms each.
            (
                500,
                { client, ids throws(ClientError) in
                    ids.append(try client.uploadRumble(strong: 0x3000, weak: 0x3000, length: 100, delay: 100))
                    try client.play(ids[2], count: 2)
                }
            ),
            (150, { client, _ throws(ClientError) in try client.setGain(0xffff) }),
            (150, { client, ids throws(ClientError) in try client.stop(ids[1]) }),
        ]
    }

    /// The script sent step by step to a virtual pad and to an emulated DualSense (the pad first, each step),
    /// through clients of our own with nothing of the library in between. The pad's records replayed through
    /// `MotorModel` and the levels hid-playstation sent must be the same changes on the driver's scale (its
    /// quantisation: magnitude / 256), in the same order, each on the controller no earlier than a jiffy before
    /// the model's and no later than ff-memless's envelope interval after it (later by as much as the whole guest
    /// stood still between the two is a `TimingFailure`). Levels the DualSense never got, the rest the same, are a
    /// `TimingFailure` (`skippedLevels`): explained by the whole guest standing still for the model's hold of the
    /// longest of them, less a jiffy and the longest time a request took from the pad to the controller (the next
    /// change's request may come that much after the guest ran again). A level left out because ff-memless lost
    /// its update to the kernel's race, which the record proves (`lostToTheUpdateRace`), runs the case again.
    static func modelMatchesKernel() async throws {
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics ff-memless pad"))
        defer { pad.destroy() }
        try await EmulationSuite.withController(.dualsense) { device, nodes in
            let padClient = try VirtualPadSuite.client(pad.eventNode)
            let controllerClient = try VirtualPadSuite.client(nodes.rumbleNode)
            defer {
                padClient.close()
                controllerClient.close()
            }
            let before = device.records().count
            let start = ProcessSuite.now()
            var padIDs: [Int16] = []
            var controllerIDs: [Int16] = []
            let padRecordsBefore = pad.records().count
            controllerClient.timesRequests = true
            for (index, step) in steps.enumerated() {
                try VirtualPadSuite.asClient { () throws(ClientError) in
                    try step.act(padClient, &padIDs)
                    try step.act(controllerClient, &controllerIDs)
                }
                try require(
                    padIDs == controllerIDs,
                    "step \(index): slots \(padIDs) on the pad, \(controllerIDs) on the controller")
                try await Task.sleep(for: .milliseconds(step.pause))
            }
            let end = ProcessSuite.now()
            let padRecords = pad.records()
            let requests = try onControllersClock(
                Array(padRecords.dropFirst(padRecordsBefore)), times: controllerClient.requestTimes)
            let model = MotorModel(records: Array(padRecords.prefix(padRecordsBefore)) + requests.records)
            let modelled = distinct(
                model.timeline(until: end).filter {
                    $0.time.microseconds >= start.microseconds - jiffyMicroseconds
                }.map {
                    Change(time: $0.time, level: level(of: $0.levels))
                })
            let (levelReports, reruns) = try EmulationSuite.splitOffReruns(device.records(), after: before)
            let reported = distinct(
                levelReports.map {
                    Change(time: $0.time, level: Level(strong: byte($0.strong), weak: byte($0.weak)))
                })
            if modelled.map(\.level) != reported.map(\.level) {
                let reason =
                    "levels differ: the model \(modelled), the DualSense \(reported)"
                    + (reruns.isEmpty ? "" : " (left out: \(rerunsDescription(reruns)))")
                    + "; every report of levels: "
                    + levelReports.map {
                        "\(Level(strong: byte($0.strong), weak: byte($0.weak)))@\($0.time.microseconds / 1000)ms"
                    }.joined(separator: ", ")
                if let skipped = skippedLevels(modelled, reported),
                    let proofs = lostToTheUpdateRace(
                        skipped.map(\.change), modelled: modelled, requests: requests.records, reports: levelReports)
                {
                    throw UpdateLostToTheRace(reason: "\(reason): \(proofs.joined(separator: "; "))")
                }
                if let skipped = skippedLevels(modelled, reported), let longest = skipped.max(by: { $0.span < $1.span })
                {
                    let slack = Double(jiffyMicroseconds) / 1000 + (requests.skews.max() ?? 0)
                    throw TimingFailure(
                        reason: "\(reason): the DualSense never got \(skipped.map(\.change))",
                        explainingStall: longest.span * 1000 - slack,
                        window: longest.change.time.seconds...(longest.change.time.seconds + longest.span))
                }
                throw TestFailure(reason: reason)
            }
            var lags: [Double] = []
            for (model, kernel) in zip(modelled, reported) {
                let lag = kernel.time.microseconds - model.time.microseconds
                let reason =
                    "\(kernel.level): the DualSense's change at \(kernel.time) is \(Double(lag) / 1000) ms from the "
                    + "model's at \(model.time): the model \(modelled), the DualSense \(reported); each request "
                    + "reached the controller after the pad by, ms: \(requests.skews.map(AudioSuite.tenths))"
                // Later than the step allows: as much later as the whole guest stood still in between explains.
                if lag > timerStepMicroseconds {
                    throw TimingFailure(
                        reason: reason, explainingStall: Double(lag - timerStepMicroseconds) / 1000,
                        window: model.time.seconds...kernel.time.seconds)
                }
                try require(lag >= -jiffyMicroseconds, reason)
                lags.append(Double(lag) / 1000)
            }
            print(
                "  \(modelled.count) changes, the same on both: \(modelled.map(\.level)); the DualSense's report "
                    + "after the model's tick, ms: \(lags.map(AudioSuite.tenths)); each request reached the "
                    + "controller after the pad by, ms: \(requests.skews.map(AudioSuite.tenths))")
            if !reruns.isEmpty { print("  left out: \(rerunsDescription(reruns))") }
        }
    }

    /// When `reported` is `modelled` with some changes left out, each left out with how long the model held it
    /// (seconds to the next change); nil otherwise. hid-playstation sends the levels ff-memless last gave it when
    /// its work item runs, so a level the guest stood still through whole (its timer and the next change's
    /// request both due when the guest ran again) is never sent: the worker runs once, with the later level.
    static func skippedLevels(_ modelled: [Change], _ reported: [Change]) -> [(change: Change, span: Double)]? {
        var skipped: [(change: Change, span: Double)] = []
        var next = 0
        for (index, change) in modelled.enumerated() {
            if next < reported.count, reported[next].level == change.level {
                next += 1
                continue
            }
            guard index + 1 < modelled.count else { return nil }
            let span = Double(modelled[index + 1].time.microseconds - change.time.microseconds) / 1e6
            skipped.append((change, span))
        }
        return next == reported.count && !skipped.isEmpty ? skipped : nil
    }

    /// ff-memless can lose an update to a race in the kernel (docs/engine.md): its handling of the upload
    /// schedules a tick, and when that tick runs before the kernel has copied the new effect into the slot (it
    /// falls due while ff-memless holds its lock, and runs as it lets go, in the writer's own context), it plays the
    /// old effect; the new level waits for the next driver call. In the DualSense's record that is a report
    /// repeating the level before, sent after the update's request, in place of the update's level. Each of
    /// `skipped` proven so (the model's change at an update's tick; a report of the level before it after that
    /// request and before the model's next change) as a sentence; nil when one is not.
    static func lostToTheUpdateRace(
        _ skipped: [Change], modelled: [Change], requests: [PadRecord], reports: [PadRecord]
    ) -> [String]? {
        var proofs: [String] = []
        for change in skipped {
            guard let index = modelled.firstIndex(where: { $0.time == change.time && $0.level == change.level }),
                index + 1 < modelled.count,
                let update = requests.last(where: {
                    $0.event == .upload && $0.replacing == true && $0.time.microseconds <= change.time.microseconds
                }),
                change.time.microseconds - update.time.microseconds <= jiffyMicroseconds
            else { return nil }
            let before = index > 0 ? modelled[index - 1].level : Level(strong: 0, weak: 0)
            let next = modelled[index + 1].time.microseconds
            guard
                let repeated = reports.first(where: {
                    $0.time.microseconds >= update.time.microseconds && $0.time.microseconds < next
                        && Level(strong: byte($0.strong), weak: byte($0.weak)) == before
                })
            else { return nil }
            proofs.append(
                "the update of slot \(update.id.map(String.init) ?? "?") to \(change.level) at "
                    + "\(update.time.microseconds / 1000)ms was lost to the kernel's race: hid-playstation sent "
                    + "\(before) again at \(repeated.time.microseconds / 1000)ms, after it")
        }
        return proofs.isEmpty ? nil : proofs
    }

    /// A run in which ff-memless lost an update to the kernel's race (`lostToTheUpdateRace`): what the model
    /// cannot say, proven by the record. Thrown inside `againAfterTheUpdateRace`, which runs the case again.
    struct UpdateLostToTheRace: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// Runs `body` and runs it again, at most twice, when it failed with `UpdateLostToTheRace`; the third such
    /// failure in a row fails the test (the race is about one update in a thousand). Each run again is printed.
    static func againAfterTheUpdateRace(_ body: () async throws -> Void) async throws {
        for attempt in 1...3 {
            do {
                return try await body()
            } catch let failure as UpdateLostToTheRace {
                guard attempt < 3 else {
                    throw TestFailure(reason: "\(failure.reason); the third run in a row to lose an update so")
                }
                print("  \(failure.reason): run again")
            }
        }
    }

    static func rerunsDescription(_ reruns: [PadRecord]) -> String {
        "\(reruns.count) empty rerun(s) of hid-playstation's output worker (a report with no valid flag) at "
            + reruns.map { "\($0.time.microseconds / 1000)ms" }.joined(separator: ", ")
    }

    /// The pad's records of the script's requests, each moved to the time the controller got the same request:
    /// each step goes to the pad and then to the controller, the thread can be held between the two, and the
    /// controller's ff-memless starts its effects and timers from its own requests. The pad records one request
    /// per client call, in order; `skews` is how much later each reached the controller, in milliseconds.
    static func onControllersClock(_ requests: [PadRecord], times: [PadTimestamp]) throws -> (
        records: [PadRecord], skews: [Double]
    ) {
        try require(
            requests.count == times.count,
            "the pad recorded \(requests.count) requests, the controller's client made \(times.count)")
        let moved = zip(requests, times).map { request, time in
            var request = request
            request.time = time
            return request
        }
        return (moved, zip(requests, times).map { Double($1.microseconds - $0.time.microseconds) / 1000 })
    }

    /// ff-memless's magnitude as hid-playstation sends it: the high byte.
    static func level(of levels: MotorMagnitudes) -> Level {
        Level(
            strong: Int(ForceFeedbackEffect.magnitude(levels.strong) / 256),
            weak: Int(ForceFeedbackEffect.magnitude(levels.weak) / 256))
    }

    /// A decoded DualSense motor byte (level / 255).
    static func byte(_ fraction: Double?) -> Int { Int(((fraction ?? 0) * 255).rounded()) }

    /// The changes, each where the level differs from the one before; the first from rest.
    static func distinct(_ changes: [Change]) -> [Change] {
        var last = Level(strong: 0, weak: 0)
        var result: [Change] = []
        for change in changes where change.level != last {
            result.append(change)
            last = change.level
        }
        return result
    }

    // MARK: Processes, with the kernel deciding

    /// `haptics play --loop 0` on the DualSense is stopped (SIGSTOP) while its motors run: with its process
    /// frozen, nothing renews the engine's effects, and the kernel's ff-memless must end them (their replay
    /// length) so the controller's last report leaves the motors at rest. Resumed, it drives them again;
    /// SIGINT ends it at rest.
    static func stopMidRumble() async throws {
        try await EmulationSuite.withController(.dualsense) { device, nodes in
            let before = device.records().count
            let play = try Subprocess([
                projectBinary("haptics"), "play", "--json", "--loop", "0", "--device", nodes.rumbleNode,
                try ProcessSuite.steadyPattern(),
            ])
            try await EmulationSuite.waitForOutputs(device, after: before, "the play's rumble") { outputs in
                outputs.contains { ($0.strong ?? 0) > 0 || ($0.weak ?? 0) > 0 }
            }
            let stopped = ProcessSuite.now()
            play.signal(SIGSTOP)
            // Long enough for any replay to run out; the check is on the reports, not this wait.
            try await Task.sleep(for: .milliseconds(600))
            let outputs = device.records().dropFirst(before).filter { $0.event == .output }
            guard let lastDriven = outputs.last(where: { ($0.strong ?? 0) > 0 || ($0.weak ?? 0) > 0 }),
                let rest = outputs.last, rest.strong == 0, rest.weak == 0
            else {
                play.signal(SIGKILL)
                _ = play.finish(timeout: VirtualPadSuite.hangGuardSeconds)
                throw TestFailure(
                    reason:
                        "600 ms after SIGSTOP the DualSense still runs at \(outputs.last.map { "\($0.strong ?? 0),\($0.weak ?? 0)" } ?? "-"): nothing ended the frozen process's effects"
                )
            }
            print(
                "  SIGSTOP to the report at rest: \(ProcessSuite.milliseconds(from: stopped, to: rest.time)); "
                    + "last report driving the motors to it: \(ProcessSuite.milliseconds(from: lastDriven.time, to: rest.time))"
            )
            let resumed = device.records().count
            play.signal(SIGCONT)
            try await EmulationSuite.waitForOutputs(device, after: resumed, "the motors driven after SIGCONT") {
                outputs in outputs.contains { ($0.strong ?? 0) > 0 || ($0.weak ?? 0) > 0 }
            }
            play.signal(SIGINT)
            try requireEqual(
                play.finish(timeout: VirtualPadSuite.hangGuardSeconds), 128 + SIGINT,
                "status after SIGINT:\n\(play.text)")
            try await EmulationSuite.waitForOutputs(device, after: resumed, "the report at rest after SIGINT") {
                outputs in outputs.last.map { $0.strong == 0 && $0.weak == 0 } ?? false
            }
        }
    }

    /// Two `haptics play` processes on the DualSense, the second started while the first drives the motors:
    /// each uploads its own effect, and ff-memless sums them, so the strong motor runs above what the first
    /// alone gave it; both end with status 0 and the motors at rest.
    /// The prepared tap's hand-over (`engine/prepared-tap-stops-before-the-mix-takes-over`, whose "never a sum"
    /// the virtual pad's motor model reads) with the kernel deciding: the tap's flat top plays from its own
    /// effect, the tail through the mix's, and hid-playstation sends what ff-memless makes of both, summed while
    /// both play. Over eight taps, every level the DualSense got is the top's, the tail's or rest (within one step
    /// of the byte); the top and the tail each reached it every time. (Without the engine's stop of the top's
    /// effect, ff-memless plays it on to its tick, past the tail's start in about half of the taps; how often
    /// hid-playstation's work item still sends that sum before the tick ends it depends on the machine.)
    static func preparedTapHandsOver() async throws {
        try await EmulationSuite.withController(.dualsense) { device, nodes in
            let engine = try HDRumbleSuite.engine(on: nodes.rumbleNode, actuators: .rumble, expectHD: false)
            defer { engine.stop() }
            let (top, tail) = EngineSuite.preparedTap
            let tap = try engine.makeAdvancedPlayer(timeline: EngineSuite.preparedTapTimeline)
            let allowed = [top, tail, .off].map(level(of:))
            func near(_ a: Level, _ b: Level) -> Bool { abs(a.strong - b.strong) <= 1 && abs(a.weak - b.weak) <= 1 }
            var seen: [String: Int] = [:]
            for round in 1...8 {
                try require(try tap.prepare(), "tap \(round): prepare() on a pad with free slots should upload the top")
                let before = device.records().count
                try tap.start(atTime: 0)
                try await EmulationSuite.waitForOutputs(device, after: before, "tap \(round): the tail, then rest") {
                    outputs in
                    outputs.contains { near(Level(strong: byte($0.strong), weak: byte($0.weak)), allowed[1]) }
                        && outputs.last.map { $0.strong == 0 && $0.weak == 0 } ?? false
                }
                let (levelReports, _) = try EmulationSuite.splitOffReruns(device.records(), after: before)
                let reported = distinct(
                    levelReports.map {
                        Change(time: $0.time, level: Level(strong: byte($0.strong), weak: byte($0.weak)))
                    })
                let origin = reported.first?.time.microseconds ?? 0
                let timed = reported.map { "\($0.level)@\(Double($0.time.microseconds - origin) / 1000) ms" }
                for change in reported where !allowed.contains(where: { near($0, change.level) }) {
                    throw TestFailure(
                        reason: "tap \(round): the DualSense ran \(change.level), neither the top \(allowed[0]), the "
                            + "tail \(allowed[1]) nor rest: \(timed)")
                }
                try require(
                    reported.contains { near($0.level, allowed[0]) }
                        && reported.contains { near($0.level, allowed[1]) },
                    "tap \(round): the top and the tail should each reach the pad: \(timed)")
                seen[reported.map(\.level.description).joined(separator: " "), default: 0] += 1
                try await Task.sleep(for: .milliseconds(60))
            }
            print(
                "  8 taps, never summed: "
                    + seen.sorted { $0.key < $1.key }.map { "\($0.value)x \($0.key)" }.joined(separator: "; "))
        }
    }

    static func twoProcesses() async throws {
        try await EmulationSuite.withController(.dualsense) { device, nodes in
            let pattern = try ProcessSuite.steadyPattern()
            let command = [projectBinary("haptics"), "play", "--json", "--device", nodes.rumbleNode, pattern]
            let before = device.records().count
            let first = try Subprocess(command)
            try await EmulationSuite.waitForOutputs(device, after: before, "the first process's rumble") {
                outputs in outputs.contains { ($0.strong ?? 0) > 0 }
            }
            // The steady pattern holds one level: what the first process alone drives the strong motor at.
            try await Task.sleep(for: .milliseconds(200))
            let alone =
                device.records().dropFirst(before).filter { $0.event == .output }.compactMap(\.strong).max() ?? 0
            let second = try Subprocess(command)
            for (index, player) in [first, second].enumerated() {
                let status = player.finish(timeout: VirtualPadSuite.hangGuardSeconds)
                try requireEqual(status, 0, "status of process \(index + 1):\n\(player.text)")
            }
            try await EmulationSuite.waitForOutputs(device, after: before, "the report at rest after both") {
                outputs in outputs.last.map { $0.strong == 0 && $0.weak == 0 } ?? false
            }
            let peak = device.records().dropFirst(before).filter { $0.event == .output }.compactMap(\.strong).max() ?? 0
            try require(
                peak > alone, "the two processes' rumbles never added up on the DualSense (peak \(peak), one \(alone))")
            print("  strong motor: \(byte(alone)) for one process, \(byte(peak)) for both")
        }
    }
}
