// The emulated Switch Pro Controller and Xbox Wireless Controller hear reports written to their hidraw nodes
// beside the bound hid-nintendo and hid-microsoft: HD rumble bands and trigger motors reach the record decoded,
// and the playback models read them.
import Foundation
import Glibc
import HapticTestDevices
import LinuxInput

extension EmulationSuite {
    /// The hand-made frame: left actuator high band 160 Hz at full amplitude, low band 80 Hz at rest; right
    /// actuator high band 320 Hz at amplitude index 50 (0.340 of 1.003), low band 160 Hz at full amplitude.
    static let handMadeFrame = SwitchRumbleFrame(
        left: SwitchRumbleActuator(
            highFrequencyCode: 0x20, highAmplitudeIndex: 100, lowFrequencyCode: 0x20, lowAmplitudeIndex: 0),
        right: SwitchRumbleActuator(
            highFrequencyCode: 0x40, highAmplitudeIndex: 50, lowFrequencyCode: 0x40, lowAmplitudeIndex: 100))

    /// A rumble-only report 0x10 with the hand-made frame (counter 5), then the neutral frame (counter 6), written
    /// to the Switch Pro Controller's hidraw node through the bound hid-nintendo. The record holds the first with
    /// both bands of both actuators decoded (played: the driver enabled vibration while probing) and the two-level
    /// reading beside them (strong: the left low band, 0; weak: the right high band); the hold-last model plays
    /// it until the neutral frame and is at rest from the neutral frame's arrival.
    static func hdRumbleBandsReachTheRecord() async throws {
        try await withController(.switchPro) { device, nodes in
            let hidraw = try openHidraw(besideEventNode: nodes.rumbleNode, under: nodes.sysfsPath)
            defer { hidraw.close() }
            let before = device.records().count
            let moving: [UInt8] = [0x10, 0x05] + handMadeFrame.bytes
            let neutral: [UInt8] = [0x10, 0x06, 0x00, 0x01, 0x40, 0x40, 0x00, 0x01, 0x40, 0x40]
            try write(hidraw, moving)
            try write(hidraw, neutral)
            let sent = [PadRecord.hex(moving), PadRecord.hex(neutral)]
            try await waitForOutputs(device, after: before, "both 0x10 reports in the record") { outputs in
                sent.allSatisfy { hex in outputs.contains { $0.report == hex } }
            }
            let outputs = device.records().dropFirst(before).filter { $0.event == .output }
            guard let record = outputs.first(where: { $0.report == sent[0] }),
                let rest = outputs.first(where: { $0.report == sent[1] })
            else { throw TestFailure(reason: "the reports left the record") }
            let hd = try unwrap(record.hdRumble, "no hdRumble in the record of \(sent[0])")
            try requireEqual(hd.counter, 5, "counter")
            try require(hd.played, "the frame was ignored: vibration not enabled")
            try requireEqual(
                hd.left,
                SwitchRumblePacket.Actuator(lowFrequency: 80, lowAmplitude: 0, highFrequency: 160, highAmplitude: 1),
                "left actuator")
            try requireEqual(
                hd.right,
                SwitchRumblePacket.Actuator(
                    lowFrequency: 160, lowAmplitude: 1, highFrequency: 320, highAmplitude: 340.0 / 1003),
                "right actuator")
            try require(
                record.strong == 0 && record.weak == 340.0 / 1003 && record.weakFrequency == 320,
                "two-level reading: strong \(record.strong ?? -1), weak \(record.weak ?? -1)")
            try require(
                rest.hdRumble?.isAtRest ?? false,
                "the neutral frame is not at rest: \(String(describing: rest.hdRumble))")

            let playback = SwitchRumblePlayback(records: outputs)
            try requireEqual(
                playback.frame(at: rest.time.seconds - 1e-6)?.packet, hd, "the frame held until the neutral one")
            try requireEqual(playback.restingFrom, rest.time.seconds, "at rest from the neutral frame")
            print(
                "    \(hidraw.node): 0x10 #5 decoded L 80 Hz 0 / 160 Hz 1, R 160 Hz 1 / 320 Hz 0.339; at rest from "
                    + "#6, \(rounded((rest.time.seconds - record.time.seconds) * 1000)) ms later")
        }
    }

    /// Report 3 enabling only the left trigger (magnitude 50, duration 25 = 250 ms, no delay, no loop), written to
    /// the Xbox Wireless Controller's hidraw node through the bound hid-microsoft. The record holds it decoded
    /// (left trigger 0.5, enable 0x08, the timing) with the body motors at rest; the duration model plays the left
    /// trigger alone until 250 ms after arrival and is at rest from then, by itself. Then a rumble through the
    /// kernel (FF_RUMBLE on the event node) reaches the pad as hid-microsoft's report: body motors only (enable
    /// 0x03), triggers at 0, the conflict a trigger writer has with the kernel's rumble.
    static func triggerReportPlaysForItsDuration() async throws {
        try await withController(.xboxOneBluetooth) { device, nodes in
            let hidraw = try openHidraw(besideEventNode: nodes.rumbleNode, under: nodes.sysfsPath)
            defer { hidraw.close() }
            let before = device.records().count
            let report: [UInt8] = [0x03, 0x08, 50, 0, 0, 0, 25, 0, 0]
            try write(hidraw, report)
            try await waitForOutputs(device, after: before, "the trigger report in the record") { outputs in
                outputs.contains { $0.report == PadRecord.hex(report) }
            }
            let outputs = device.records().dropFirst(before).filter { $0.event == .output }
            guard let record = outputs.first(where: { $0.report == PadRecord.hex(report) }) else {
                throw TestFailure(reason: "the report left the record")
            }
            let command = try unwrap(record.xboxRumble, "no xboxRumble in the record of \(PadRecord.hex(report))")
            try requireEqual(
                command,
                XboxRumblePacket(
                    enable: 0x08, leftTrigger: 0.5, rightTrigger: 0, strong: 0, weak: 0, duration: 25, startDelay: 0,
                    loopCount: 0),
                "decoded command")
            try require(record.strong == 0 && record.weak == 0, "the body motors moved")
            let playback = XboxRumblePlayback(records: outputs)
            let arrival = record.time.seconds
            try requireEqual(playback.levels(at: arrival + 0.1), XboxMotorLevels(leftTrigger: 0.5), "levels at +100 ms")
            try requireEqual(playback.levels(at: arrival + 0.25), .rest, "levels at +250 ms")
            try require(
                abs(playback.restingFrom - (arrival + 0.25)) < 1e-9,
                "at rest from \(playback.restingFrom), expected \(arrival + 0.25)")

            // The kernel's rumble: hid-microsoft writes report 3 with the body motors only.
            let client: RawClient
            do { client = try RawClient(node: nodes.rumbleNode) } catch {
                throw TestFailure(reason: "opening \(nodes.rumbleNode): \(error)")
            }
            defer { client.close() }
            let kernelBefore = device.records().count
            do {
                let id = try client.uploadRumble(strong: 0xffff, weak: 0x8000)
                try client.play(id)
            } catch { throw TestFailure(reason: "rumble through \(nodes.rumbleNode): \(error)") }
            try await waitForOutputs(device, after: kernelBefore, "hid-microsoft's rumble report") { outputs in
                outputs.contains { $0.xboxRumble.map { $0.strong > 0 } ?? false }
            }
            let kernel = device.records().dropFirst(kernelBefore).compactMap(\.xboxRumble).first { $0.strong > 0 }
            try require(
                kernel.map { $0.enable == 0x03 && $0.leftTrigger == 0 && $0.rightTrigger == 0 } ?? false,
                "hid-microsoft's report: \(String(describing: kernel))")
            print(
                "    \(hidraw.node): report 3 left trigger 0.5 for 250 ms, at rest by itself after it; "
                    + "hid-microsoft's rumble: enable 0x03, triggers 0, duration \(kernel?.duration ?? 0), "
                    + "loops \(kernel?.loopCount ?? 0)")
        }
    }

    /// The hidraw node of the HID device behind `eventNode`, opened for writing.
    static func openHidraw(besideEventNode eventNode: String, under sysfsPath: String) throws -> HidrawDevice {
        guard let node = HidrawDevice.node(besideEventNode: eventNode) else {
            throw TestFailure(reason: "no hidraw node beside \(eventNode) under \(sysfsPath)")
        }
        do { return try HidrawDevice(node: node, logger: logger()) } catch {
            throw TestFailure(reason: "opening \(node): \(error)")
        }
    }

    static func unwrap<T>(_ value: T?, _ what: String) throws -> T {
        guard let value else { throw TestFailure(reason: what) }
        return value
    }
}
