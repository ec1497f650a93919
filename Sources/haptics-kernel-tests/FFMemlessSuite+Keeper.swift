// The keeper on real ff-memless drivers: a silent endless effect played beside the mix effect makes every
// ff-memless pass call the driver, so a change of level while the mix plays can be one update (EVIOCSFF) with no
// play. Measured here through our own raw clients: what one change costs the driver (reports, their levels and
// order, the latency to the new level) as update+play and as an update alone; and that an update alone followed,
// within the kernel tick, by a stop or by the descriptor's close (what the kernel does when the process dies,
// SIGKILL included) leaves the motors at rest.
import Foundation
import Glibc
import HapticTestDevices
import LinuxInput

extension FFMemlessSuite {
    static let keeperTests = [
        KernelTest(name: "ff-memless/switch-pro-and-dualsense-bt-one-change-as-update-alone-beside-a-keeper") {
            try await StallWitness.againAfterAGuestStall { try await oneChangeBothWays() }
        },
        KernelTest(name: "ff-memless/dualsense-bt-and-xbox-one-bt-update-alone-then-stop-or-close-within-the-tick-rest")
        {
            try await updateThenStopOrClose()
        },
    ]

    /// The levels: the one before a change, the one after, and one an update sends right before a stop.
    static let before = (strong: UInt16(0x4000), weak: UInt16(0x4000))
    static let after = (strong: UInt16(0xc000), weak: UInt16(0xc000))
    static let last = (strong: UInt16(0xffff), weak: UInt16(0xffff))

    /// How long a change is given to reach the pad and any report it causes to end; hid-nintendo, slowest, sends a
    /// frame every 15-30 ms and ends a change within a few frames.
    static let settleMilliseconds = 400
    /// The reports a change causes: those within this time of it. hid-nintendo sends the frames of one driver call
    /// within about 45 ms, and its periodic resend of the new level comes 50 ms after that frame at the earliest;
    /// the replay window (150 ms) has not ended.
    static let changeWindowMicroseconds: Int64 = 80_000
    /// The frames at the new level counted as the call's own: those less than this after the first. hid-nintendo
    /// sends the frames of one call one per input report, 15-30 ms apart, and resends the current frame on the first
    /// input report 50 ms or more after its last frame; by the frame pacing's phase that resend may fall inside the
    /// window for either way of making the change.
    static let callFramesMicroseconds: Int64 = 50_000

    typealias Report = (time: PadTimestamp, strong: Double, weak: Double)

    /// An update alone that ff-memless played with the old effect: the reports within the window, none at the new
    /// level.
    struct LostUpdate: Error {
        let reports: [Report]
    }

    /// The driver's reports since record `index` of `device` that carry levels: time, and both motors as the
    /// emulator decoded them. hid-playstation's empty reruns (`EmulationSuite.splitOffReruns`) are left out:
    /// they carry no level, and read as rest they would pass for a stop the driver was never asked for.
    static func reports(_ device: any EmulatedDevice, after index: Int) throws -> [Report] {
        try EmulationSuite.splitOffReruns(device.records(), after: index).levels.map {
            ($0.time, $0.strong ?? 0, $0.weak ?? 0)
        }
    }

    /// How long after the old level's play the change is sent: within the replay window.
    static let changeAfterMilliseconds = 100

    /// How a change is sent: an update then a play, or an update alone beside a keeper; with the mix effect's
    /// replay length (the engine's 150 ms, or 0: endless).
    struct Way {
        var keeper: Bool
        var length: UInt16
        var name: String { (keeper ? "update alone beside a keeper" : "update+play") + ", length \(length) ms" }
    }

    /// What one change from `before` to `after`, sent `way`, cost the driver: the reports within
    /// `changeWindowMicroseconds` of it, the latency from the update's call to the first at the new level, and
    /// that window (monotonic seconds).
    static func change(on device: any EmulatedDevice, node: String, _ way: Way) async throws -> (
        reports: [Report], latency: Double, window: ClosedRange<Double>
    ) {
        let client = try VirtualPadSuite.client(node)
        defer { client.close() }
        if way.keeper {
            // Its start at rest is the driver's business, not the change's: done well before.
            try VirtualPadSuite.asClient { () throws(ClientError) in
                try client.play(try client.uploadRumble(strong: 0, weak: 0))
            }
            try await Task.sleep(for: .milliseconds(settleMilliseconds))
        }
        let mix = try VirtualPadSuite.asClient { () throws(ClientError) -> Int16 in
            let mix = try client.uploadRumble(strong: before.strong, weak: before.weak, length: way.length)
            try client.play(mix)
            return mix
        }
        let played = ProcessSuite.now()
        // The change comes within the replay window, after the driver has sent the old level.
        try await Task.sleep(for: .milliseconds(changeAfterMilliseconds))
        let index = device.records().count
        let changed = ProcessSuite.now()
        try VirtualPadSuite.asClient { () throws(ClientError) in
            try client.uploadRumble(strong: after.strong, weak: after.weak, length: way.length, id: mix)
            if !way.keeper { try client.play(mix) }
        }
        try await Task.sleep(for: .milliseconds(settleMilliseconds))
        let sent = try reports(device, after: index).filter {
            $0.time.microseconds - changed.microseconds < changeWindowMicroseconds
        }
        // The new level: the highest the change sent (both levels are the same on both motors), above the level
        // halfway between the old one and the new one, as the pad decodes them.
        let top = sent.map(\.strong).max() ?? 0
        let halfway = (Double(before.strong) + Double(after.strong)) / 2 / Double(UInt16.max)
        guard top > halfway, let arrived = sent.first(where: { $0.strong == top }) else {
            client.close()
            try await EmulationSuite.waitForOutputs(device, after: index, "the report at rest after the close") {
                $0.last.map { ($0.strong ?? 0) == 0 && ($0.weak ?? 0) == 0 } ?? false
            }
            // ff-memless's timer ran between its handling of the update and the kernel's copy of the new effect,
            // and called the driver with the old one (docs/engine.md): the update alone waits for the next call,
            // and this one has none. Only an update alone can meet it: a play hands the copied effect over.
            if way.keeper { throw LostUpdate(reports: sent) }
            throw TestFailure(reason: "\(way.name): the change sent nothing at the new level: \(sent)")
        }
        if !sent.allSatisfy({ $0.strong == top || $0.strong == sent.first?.strong }) {
            let reason = "\(way.name): the change sent levels other than the old one and the new one: \(sent)"
            // A rest among them: the old effect's replay window ran out before the change came, which takes the
            // whole guest standing still for the rest of that window after the pause before the change.
            guard way.length > 0, sent.contains(where: { $0.strong == 0 && $0.weak == 0 }) else {
                throw TestFailure(reason: reason)
            }
            throw TimingFailure(
                reason: reason, explainingStall: Double(Int(way.length) - changeAfterMilliseconds),
                window: played.seconds...(Double(changed.microseconds) / 1e6))
        }
        try require(
            sent.last?.strong == top, "\(way.name): the change ended at another level than the new one: \(sent)")
        // Closing ends at rest; its reports are not the change's.
        client.close()
        try await EmulationSuite.waitForOutputs(device, after: index, "the report at rest after the close") {
            $0.last.map { ($0.strong ?? 0) == 0 && ($0.weak ?? 0) == 0 } ?? false
        }
        let start = Double(changed.microseconds) / 1e6
        return (
            sent, Double(arrived.time.microseconds - changed.microseconds) / 1000,
            start...start + Double(changeWindowMicroseconds) / 1e6
        )
    }

    /// On the Switch Pro Controller (hid-nintendo) and the DualSense over Bluetooth (hid-playstation): one change
    /// done each way. Each must end at the new level with no level but the old and the new one in between, and
    /// the update alone must send no more reports at the new level than update+play of the same effect, counting
    /// those less than 50 ms after the first. (Reports at the old level are hid-nintendo's: its worker resends the
    /// last frame before a new one, and resends the current one every 50 ms while the motors run.) On the Switch
    /// pad an update alone with more such reports is a `TimingFailure`: its worker, held back 5 ms or more
    /// (`HDRumbleSuite.frameSkipStall`), sends the frame it queued a report later and the next one again.
    static func oneChangeBothWays() async throws {
        var figures: [String] = []
        for model in [EmulatedModel.switchPro, .dualsenseBluetooth] {
            try await EmulationSuite.withController(model) { device, nodes in
                var newFrames: [Int] = []
                var windows: [ClosedRange<Double>] = []
                for way in [
                    Way(keeper: false, length: 150), Way(keeper: true, length: 150), Way(keeper: false, length: 0),
                ] {
                    var result = (reports: [Report](), latency: 0.0, window: 0.0...0.0)
                    // A lost update (`LostUpdate`, the kernel's race) is the change made again, at most twice.
                    for attempt in 1...3 {
                        do {
                            result = try await change(on: device, node: nodes.rumbleNode, way)
                            break
                        } catch let lost as LostUpdate {
                            let levels = lost.reports.map { AudioSuite.tenths($0.strong) }
                            guard attempt < 3 else {
                                throw TestFailure(
                                    reason: "\(model.rawValue) \(way.name): the update was lost three times in a row "
                                        + "(levels \(levels))")
                            }
                            print(
                                "    \(model.rawValue) \(way.name): ff-memless played the old effect (levels "
                                    + "\(levels)): the change made again")
                        }
                    }
                    windows.append(result.window)
                    let first = result.reports.first?.time.microseconds ?? 0
                    let levels = result.reports.map {
                        "\(AudioSuite.tenths($0.strong))@\(AudioSuite.tenths(Double($0.time.microseconds - first) / 1000))"
                    }
                    figures.append(
                        "\(model.rawValue) \(way.name): \(result.reports.count) reports [level@ms \(levels.joined(separator: " "))], "
                            + "new level \(AudioSuite.tenths(result.latency)) ms after the call")
                    // The call's own reports at the new level (`callFramesMicroseconds`).
                    let top = result.reports.map(\.strong).max() ?? 0
                    let firstTop = result.reports.first { $0.strong == top }?.time.microseconds ?? 0
                    newFrames.append(
                        result.reports.count {
                            $0.strong == top && $0.time.microseconds - firstTop < Self.callFramesMicroseconds
                        })
                }
                guard newFrames[1] <= newFrames[0] else {
                    let reason =
                        "\(model.rawValue): an update alone sent \(newFrames[1]) reports at the new level, "
                        + "update+play \(newFrames[0]); " + figures.suffix(3).joined(separator: "; ")
                    guard model == .switchPro else { throw TestFailure(reason: reason) }
                    throw TimingFailure(
                        reason: reason, explainingStall: HDRumbleSuite.frameSkipStall, window: windows[1])
                }
            }
        }
        print("    " + figures.joined(separator: "\n    "))
    }

    /// On the DualSense over Bluetooth (hid-playstation) and the Xbox pad over Bluetooth (hid-microsoft): the mix
    /// effect plays beside a keeper, is updated alone to a new level and, at once (the same tick), stopped, or its
    /// descriptor closed. The pad must end at rest. The same without a keeper is printed (not checked: whether a
    /// tick falls between the two calls is chance): there the old level stays on.
    static func updateThenStopOrClose() async throws {
        var figures: [String] = []
        for model in [EmulatedModel.dualsenseBluetooth, .xboxOneBluetooth] {
            try await EmulationSuite.withController(model) { device, nodes in
                for (keeper, ending) in [(true, "stop"), (true, "close"), (false, "stop")] {
                    let client = try VirtualPadSuite.client(nodes.rumbleNode)
                    let start = device.records().count
                    try VirtualPadSuite.asClient { () throws(ClientError) in
                        if keeper { try client.play(try client.uploadRumble(strong: 0, weak: 0)) }
                        let mix = try client.uploadRumble(strong: before.strong, weak: before.weak, length: 150)
                        try client.play(mix)
                        try client.uploadRumble(strong: last.strong, weak: last.weak, length: 150, id: mix)
                        if ending == "stop" { try client.stop(mix) } else { client.close() }
                    }
                    try await Task.sleep(for: .milliseconds(settleMilliseconds))
                    let sent = try reports(device, after: start)
                    let rests = sent.last.map { $0.strong == 0 && $0.weak == 0 } ?? false
                    let what = "\(model.rawValue) \(keeper ? "with" : "without") a keeper, update then \(ending)"
                    if keeper {
                        try require(
                            rests, "\(what): the pad runs on at \(sent.last.map { "\($0.strong),\($0.weak)" } ?? "-")")
                    }
                    figures.append(
                        "\(what): \(rests ? "at rest" : "runs on at \(AudioSuite.tenths(sent.last?.strong ?? 0))") "
                            + "(\(sent.count) reports)")
                    client.close()
                    // Without a keeper the close leaves the old level on (the controller is removed next).
                    if !keeper { continue }
                    try await EmulationSuite.waitForOutputs(device, after: start, "the report at rest after the close")
                    {
                        $0.last.map { ($0.strong ?? 0) == 0 && ($0.weak ?? 0) == 0 } ?? false
                    }
                }
            }
        }
        print("    " + figures.joined(separator: "\n    "))
    }
}
