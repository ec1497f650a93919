// The devices `make bench-peers` plays on, each observed from the device's side: the uinput virtual pad (its
// ff-memless motor model), and the emulated DualSense and Xbox Wireless Controller over Bluetooth, which the
// kernel's hid-playstation and hid-microsoft bind and which record every output report their driver, or SDL
// through hidraw, sends them.
import Foundation
import HapticRendering
import HapticTestDevices
import LinuxInput
import Logging

enum PeerDeviceKind: String, CaseIterable, Sendable {
    case virtualPad = "virtual-pad"
    case dualsenseBluetooth = "dualsense-bt"
    case xboxOneBluetooth = "xbox-one-bt"

    /// The render profile both sides play with, so that they aim at the same motor levels.
    var profile: String {
        switch self {
        case .virtualPad: "generic"
        case .dualsenseBluetooth: "dualsense"
        case .xboxOneBluetooth: "xbox-bluetooth"
        }
    }

    var emulatedModel: EmulatedModel? {
        switch self {
        case .virtualPad: nil
        case .dualsenseBluetooth: .dualsenseBluetooth
        case .xboxOneBluetooth: .xboxOneBluetooth
        }
    }
}

/// One device under test, plugged in for the time of its measurements.
final class PeerDevice: Sendable {
    let kind: PeerDeviceKind
    /// The evdev node with force feedback (ours, and SDL's haptic API, play there).
    let eventNode: String
    /// sdl-peer's options that pick this device: its USB ids, and the evdev node's name for SDL's haptic API.
    let sdlSelection: [String]
    private let pad: VirtualPad?
    private let emulated: (any EmulatedDevice)?

    init(_ kind: PeerDeviceKind, logger: Logger) throws {
        self.kind = kind
        if let model = kind.emulatedModel {
            let device = try model.start(logger: logger)
            emulated = device
            pad = nil
            eventNode = try device.waitUntilBound(timeout: 20).rumbleNode
        } else {
            let created = try VirtualPad(VirtualPadConfiguration(), logger: logger)
            pad = created
            emulated = nil
            eventNode = created.eventNode
        }
        sdlSelection = Self.sdlSelection(eventNode)
    }

    /// `--ids VENDOR:PRODUCT --name NAME` of the input device behind `node`, read from sysfs.
    private static func sdlSelection(_ node: String) -> [String] {
        let device = "/sys/class/input/\((node as NSString).lastPathComponent)/device"
        let read = { (name: String) in
            ((try? String(contentsOfFile: "\(device)/\(name)", encoding: .utf8)) ?? "")
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return ["--ids", "\(read("id/vendor")):\(read("id/product"))", "--name", read("name")]
    }

    func destroy() {
        pad?.destroy()
        emulated?.destroy()
    }

    /// Every record so far.
    func records() -> [PadRecord] { pad?.records() ?? emulated?.records() ?? [] }

    /// When the device's output first went above zero at or after `start` (µs, CLOCK_MONOTONIC): the pad's play
    /// after which its motor model is above 0 (our engine's keeper, a rumble of 0 it plays as it opens the pad, is
    /// no output), or the first report that sets a motor running; nil if it has not yet.
    func firstOutput(after start: Int64) -> Int64? {
        let since = recordsSince(start)
        if let pad {
            // Read only once a play came (the latency rounds poll this), and after the records: the pad updates its
            // model before it logs a record, so this model holds every play among them.
            guard since.contains(where: { $0.event == .play }) else { return nil }
            let model = pad.motorModel()
            return since.first { $0.event == .play && model.output(at: $0.time) != .off }?.time.microseconds
        }
        return since.first { record in
            record.event == .output && ((record.strong ?? 0) > 0 || (record.weak ?? 0) > 0)
        }?.time.microseconds
    }

    /// The records at or after `start`, found from the end: the latency rounds poll this while a run's history
    /// grows to thousands of records, and a scan from the start would make the poller the busiest thread of a
    /// one-CPU guest, beside the threads whose times it measures.
    private func recordsSince(_ start: Int64) -> ArraySlice<PadRecord> {
        let all = records()
        let first = (all.lastIndex { $0.time.microseconds < start }).map { $0 + 1 } ?? all.startIndex
        return all[first...]
    }

    /// When the device's motors came to rest at or after `start`: the pad's stop or erase after which its motor
    /// model is at 0 (a killed client's effects are stopped and erased by the kernel), or a report that sets both
    /// motors to 0; nil if not yet. Record times, not the model's change points, which fall on kernel ticks.
    func firstRest(after start: Int64) -> Int64? {
        let model = pad?.motorModel()
        return recordsSince(start).first { record in
            if let model {
                return (record.event == .stop || record.event == .erase) && model.output(at: record.time) == .off
            }
            return record.event == .output && record.strong == 0 && record.weak == 0
        }?.time.microseconds
    }

    /// Whether the motors are at rest now.
    var atRest: Bool {
        if let pad { return pad.motorOutput(at: PadTimestamp(microseconds: Clock.microseconds())) == .off }
        return (emulated?.motors.levels ?? .off) == .off
    }

    /// The device-writes among the records from `start` to `end` (µs): uploads, erases, plays and stops on the
    /// pad, output reports on a controller.
    func writes(from start: Int64, to end: Int64) -> Int {
        records().filter { record in
            (start...end).contains(record.time.microseconds)
                && (pad != nil ? record.event != .output : record.event == .output)
        }.count
    }

    /// What the motors ran from `start` (µs) on, in seconds after `start`.
    func output(from start: Int64, to end: Int64) -> LevelSeries {
        let origin = Double(start) / 1e6
        if let pad {
            let model = pad.motorModel()
            let initial = model.output(at: PadTimestamp(microseconds: start))
            let changes = model.timeline(until: PadTimestamp(microseconds: end)).filter { $0.time.microseconds > start }
            return LevelSeries(
                points: [.init(time: 0, strong: initial.strong, weak: initial.weak)]
                    + changes.map {
                        .init(time: $0.time.seconds - origin, strong: $0.levels.strong, weak: $0.levels.weak)
                    })
        }
        return LevelSeries(
            points: records().filter { $0.event == .output && (start...end).contains($0.time.microseconds) }.map {
                .init(time: $0.time.seconds - origin, strong: $0.strong ?? 0, weak: $0.weak ?? 0)
            })
    }
}
