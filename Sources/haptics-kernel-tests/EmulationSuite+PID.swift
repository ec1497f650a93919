// The emulated USB HID PID joystick under the kernel's own PID driver (hid-pidff, which usbhid starts for the
// device hid-generic binds): what the driver offers on the event node, what an upload, a play and an erase become
// on the device (decoded PID reports), the device's own pool deciding the effect count, and a replug.
import CLinuxInput
import Glibc
import HapticTestDevices
import LinuxInput
@_spi(Internals) import LinuxSystem

extension EmulationSuite {
    static let pidTests = [
        KernelTest(name: "emulation/pid-joystick/bound-by-hid-generic-hid-pidff-offers-periodic-constant-gain-40-slots")
        {
            try await pidJoystickOffersItsEffects()
        },
        KernelTest(name: "emulation/pid-joystick/sine-upload-play-erase-reach-the-device-decoded") {
            try await pidSineReachesTheDevice()
        },
        KernelTest(name: "emulation/pid-joystick/upload-17-on-16-blocks-fails-enospc-earlier-effects-kept") {
            try await pidFullDeviceRefusesTheUpload()
        },
        KernelTest(name: "emulation/pid-joystick/unplug-replug-hid-pidff-binds-again") {
            try await pidJoystickReplugs()
        },
    ]

    /// The slots hid-pidff offers: the descriptor's block index range.
    static let pidSlots = PIDJoystick.blockIndexRange.count

    /// hid-generic bound the joystick and hid-pidff gave its node FF_CONSTANT, FF_PERIODIC with every waveform,
    /// FF_GAIN and 40 slots, as `haptics probe` reports them, and the input core FF_RUMBLE, which reaches the
    /// device as a sine: period 50 ms, magnitude strong / 3 + weak / 6; its empty envelope is not sent, and
    /// its length 0 ("until stopped") is sent as 0xffff, the PID specification's endless duration (what the
    /// bench's 6.1.192 does; older 6.1 kernels sent both as they were).
    static func pidJoystickOffersItsEffects() async throws {
        try await withController(.pidJoystick) { device, nodes in
            try requireEqual(nodes.driver, EmulatedModel.pidJoystick.driver, "driver bound in sysfs")
            try requirePIDEffects(nodes.rumbleNode)
            let probed = try DeviceSuite.probe(nodes.rumbleNode)
            let features = { (names: [String]) in Set(names.compactMap { ForceFeedbackFeature(name: $0) }) }
            try requireEqual(
                features(probed.forceFeedback.effects), [.rumble, .periodic, .constant], "effects in probe --json")
            try requireEqual(
                features(probed.forceFeedback.waveforms), [.square, .triangle, .sine, .sawUp, .sawDown],
                "waveforms in probe --json")
            try require(probed.forceFeedback.gain, "probe --json shows no gain")
            try requireEqual(probed.forceFeedback.maxEffects, pidSlots, "maxEffects in probe --json")
            let client = try openClient(nodes.rumbleNode)
            defer { client.close() }
            let before = device.records().count
            // Length 0, "until stopped" in the kernel's API, as most rumble clients upload it.
            do {
                let id = try client.uploadRumble(strong: 0xffff, weak: 0, length: 0)
                try client.play(id)
            } catch {
                throw TestFailure(reason: "rumble upload and play: \(error)")
            }
            // The play comes after the upload's reports on the same queue: the reports before it are the upload.
            try await waitForPID(device, after: before, "the rumble's Effect Operation") { $0.kind == .effectOperation }
            let (reset, rumble) = withoutReset(pidReports(device, after: before).map(\.report))
            try require(reset.isEmpty || reset.contains { $0.control == .reset }, "the first upload's reset: \(reset)")
            try requireEqual(
                rumble.map(\.kind), [.createNewEffect, .setEffect, .setPeriodic, .effectOperation],
                "the rumble's reports (no Set Envelope: its envelope is empty)")
            try requireEqual(rumble[0].effectType, .sine, "the rumble's effect type")
            try requireEqual(rumble[1].duration, 0xffff, "the rumble's duration (length 0 sent as 0xffff)")
            try requireEqual(rumble[2].magnitude, 0xffff / 3, "the rumble's magnitude")
            try requireEqual(rumble[2].period, 50, "the rumble's period")
            print(
                "    \(nodes.rumbleNode) \"\(probed.name)\" driver \(nodes.driver): "
                    + "effects \(probed.forceFeedback.effects.joined(separator: ",")), waveforms "
                    + "\(probed.forceFeedback.waveforms.joined(separator: ",")), gain, \(pidSlots) slots; "
                    + "rumble 0xffff/0 length 0 became an endless 50 ms sine of 0x5555 without Set Envelope")
        }
    }

    /// The node's FF bits as the kernel reports them (EVIOCGBIT) and its slot count (EVIOCGEFFECTS).
    static func requirePIDEffects(_ node: String) throws {
        let device = try EventDevice(node: node, logger: logger())
        defer { device.close() }
        let ff = device.capabilities.forceFeedback
        let features = ff.effects + ff.waveforms
        for feature in [ForceFeedbackFeature.periodic, .sine, .square, .triangle, .constant] {
            try require(features.contains(feature), "\(node) lacks \(feature.name): \(features.map(\.name))")
        }
        try require(ff.gain, "\(node) lacks gain")
        try requireEqual(try DeviceSuite.kernelEffectSlots(node), pidSlots, "EVIOCGEFFECTS")
    }

    /// A sine as a client uploads it: 100 ms period, magnitude 0x6000, offset -0x0800, phase 0x4000, attack from
    /// 0x1000 over 50 ms, fade to 0x2000 over 80 ms, 400 ms long after a 30 ms delay.
    static func pidSine(id: Int16 = -1) -> ff_effect {
        var effect = ff_effect()
        effect.type = UInt16(FF_PERIODIC)
        effect.id = id
        effect.direction = 0x4000
        effect.replay = ff_replay(length: 400, delay: 30)
        cli_ff_periodic(&effect).pointee = ff_periodic_effect(
            waveform: UInt16(FF_SINE), period: 100, magnitude: 0x6000, offset: -0x0800, phase: 0x4000,
            envelope: ff_envelope(attack_length: 50, attack_level: 0x1000, fade_length: 80, fade_level: 0x2000),
            custom_len: 0, custom_data: nil)
        return effect
    }

    /// A raw client of the node; failing to open it fails the test.
    static func openClient(_ node: String) throws -> RawClient {
        do { return try RawClient(node: node) } catch { throw TestFailure(reason: "opening \(node): \(error)") }
    }

    static func pidReports(_ device: any EmulatedDevice, after before: Int) -> [(time: Double, report: PIDReport)] {
        device.records().dropFirst(before).compactMap { record in record.pid.map { (record.time.seconds, $0) } }
    }

    static func waitForPID(
        _ device: any EmulatedDevice, after before: Int, _ what: String, _ condition: @escaping (PIDReport) -> Bool
    ) async throws {
        do {
            try await waitForOutputs(device, after: before, what) { outputs in
                outputs.contains { $0.pid.map(condition) ?? false }
            }
        } catch let failure as TestFailure {
            // Every report with its time, the ones since `before` marked: what a lost or extra report looks like.
            let seen = device.records().enumerated().map { index, record in
                "\(index < before ? "" : "new ")\(record.time) \(record.report ?? "?")"
            }
            // The kernel's last words (usbhid and hid-pidff warn there).
            var kernel = ""
            if let dmesg = try? Subprocess(["/bin/sh", "-c", "dmesg | tail -20"]) {
                _ = dmesg.finish(timeout: 5)
                kernel = dmesg.text
            }
            throw TestFailure(reason: "\(failure.reason); the device received: \(seen)\n\(kernel)")
        }
    }

    /// EVIOCSFF of the sine reaches the device as Create New Effect (a sine) and then Set Effect, Set Periodic and
    /// Set Envelope on the block the device loaded, each value as uploaded (levels and times exactly, the phase
    /// within 2 of 0xffff, the direction within 1/255); a play as Effect Operation start with loop count 1, after
    /// which the device's model plays nothing during the start delay, half way between attack level and magnitude
    /// in mid-attack, the full magnitude in mid-play, half way to the fade level in mid-fade and nothing after
    /// (each within 2/0x7fff); an erase as
    /// Effect Operation stop (twice: the input core's stop, then hid-pidff's) and Block Free of that block.
    static func pidSineReachesTheDevice() async throws {
        try await withController(.pidJoystick) { device, nodes in
            let client = try openClient(nodes.rumbleNode)
            defer { client.close() }
            let before = device.records().count
            let id: Int16
            do { id = try client.upload(pidSine()) } catch { throw TestFailure(reason: "EVIOCSFF: \(error)") }
            try await waitForPID(device, after: before, "Set Envelope") { $0.kind == .setEnvelope }
            let (reset, upload) = withoutReset(pidReports(device, after: before).map(\.report))
            try require(reset.isEmpty || reset.contains { $0.control == .reset }, "the first upload's reset: \(reset)")
            try requireEqual(
                upload.map(\.kind), [.createNewEffect, .setEffect, .setPeriodic, .setEnvelope], "upload reports")
            let created = upload[0]
            try requireEqual(created.effectType, .sine, "Create New Effect type")
            try requireEqual(created.status, .success, "Block Load status")
            let block = try unwrap(created.blockIndex, "no block loaded")
            try require(
                upload.allSatisfy { $0.kind == .createNewEffect || $0.blockIndex == block }, "block of \(upload)")
            let effect = upload[1], periodic = upload[2], envelope = upload[3]
            try requireEqual(effect.effectType, .sine, "Set Effect type")
            try requireEqual(effect.duration, 400, "duration ms")
            try requireEqual(effect.startDelay, 30, "start delay ms")
            try requireEqual(effect.gain, 1, "effect gain")
            try require(
                abs((effect.direction ?? -1) - 0.25) <= 1.0 / 255, "direction \(String(describing: effect.direction))")
            try requireEqual(periodic.magnitude, 0x6000, "magnitude")
            try requireEqual(periodic.offset, -0x0800, "offset")
            try requireEqual(periodic.period, 100, "period ms")
            try require(abs((periodic.phase ?? 0) - 0x4000) <= 2, "phase \(String(describing: periodic.phase))")
            try requireEqual(envelope.attackLevel, 0x1000, "attack level")
            try requireEqual(envelope.attackTime, 50, "attack ms")
            try requireEqual(envelope.fadeLevel, 0x2000, "fade level")
            try requireEqual(envelope.fadeTime, 80, "fade ms")

            let playBefore = device.records().count
            do { try client.play(id) } catch { throw TestFailure(reason: "play: \(error)") }
            try await waitForPID(device, after: playBefore, "Effect Operation start") { $0.kind == .effectOperation }
            guard let (start, operation) = pidReports(device, after: playBefore).first else {
                throw TestFailure(reason: "no PID report after the play")
            }
            try requireEqual(operation.operation, .start, "operation")
            try requireEqual(operation.blockIndex, block, "operation block")
            try requireEqual(operation.loopCount, 1, "loop count")
            let playback = PIDPlayback(records: device.records())
            let step = 1.0 / 0x7fff
            // In the delay; mid-attack (halfway from 0x1000 to 0x6000); mid-play; mid-fade (halfway from 0x6000
            // to 0x2000); after the end.
            let expected: [(Double, Double)] = [
                (0.010, 0), (0.055, Double(0x3800) / 0x7fff), (0.230, Double(0x6000) / 0x7fff),
                (0.390, Double(0x4000) / 0x7fff), (0.440, 0),
            ]
            for (offset, magnitude) in expected {
                let measured = playback.output(at: start + offset).magnitude
                try require(
                    abs(measured - magnitude) <= step * 2,
                    "magnitude \(measured) at +\(offset) s, expected \(magnitude)")
            }

            let eraseBefore = device.records().count
            do { try client.erase(id) } catch { throw TestFailure(reason: "erase: \(error)") }
            try await waitForPID(device, after: eraseBefore, "Block Free") { $0.kind == .blockFree }
            let erase = pidReports(device, after: eraseBefore).map(\.report)
            // The input core stops the effect before it erases it, and hid-pidff's erase stops it again.
            try requireEqual(erase.last?.kind, .blockFree, "erase ends with Block Free")
            try require(
                erase.dropLast().allSatisfy { $0.operation == .stop } && erase.count >= 2,
                "erase reports: \(erase.map(\.kind))")
            try require(erase.allSatisfy { $0.blockIndex == block }, "erase block: \(erase)")
            print(
                "    block \(block): Create New Effect, Set Effect, Set Periodic, Set Envelope as uploaded; start, "
                    + "the model's magnitude follows delay/attack/fade; erase: stop, Block Free")
        }
    }

    /// The device holds 16 blocks and the kernel offers 40 slots: the 17th upload is refused by the device (Block
    /// Load "full"), which reaches the client as ENOSPC; the 16 before stay loaded and play.
    static func pidFullDeviceRefusesTheUpload() async throws {
        try await withController(.pidJoystick) { device, nodes in
            let client = try openClient(nodes.rumbleNode)
            defer { client.close() }
            let before = device.records().count
            var ids: [Int16] = []
            for _ in 0..<PIDJoystick.defaultCapacity {
                do { ids.append(try client.upload(pidSine())) } catch {
                    throw TestFailure(reason: "upload \(ids.count + 1): \(error)")
                }
            }
            do {
                let id = try client.upload(pidSine())
                throw TestFailure(reason: "upload \(ids.count + 1) succeeded as slot \(id)")
            } catch let error as ClientError {
                try requireEqual(error.errno, Errno(rawValue: ENOSPC), "the refused upload's errno")
            }
            let created = pidReports(device, after: before).map(\.report).filter { $0.kind == .createNewEffect }
            try requireEqual(
                created.map(\.status), Array(repeating: .success, count: ids.count) + [.full], "Block Load answers")
            try requireEqual(
                Set(created.compactMap(\.blockIndex)), Set(1...PIDJoystick.defaultCapacity), "blocks loaded")
            // The earlier effects are intact: the first and the last still play on their blocks.
            let playBefore = device.records().count
            for id in [ids[0], ids[ids.count - 1]] {
                do { try client.play(id) } catch { throw TestFailure(reason: "play \(id): \(error)") }
            }
            try await waitForOutputs(device, after: playBefore, "two starts") { outputs in
                outputs.compactMap(\.pid).filter { $0.operation == .start }.count == 2
            }
            let started = pidReports(device, after: playBefore).map(\.report).filter { $0.operation == .start }
            try requireEqual(
                started.compactMap(\.blockIndex),
                [created[0].blockIndex, created[ids.count - 1].blockIndex]
                    .compactMap { $0 }, "blocks started")
            print(
                "    \(ids.count) uploads loaded blocks 1-\(ids.count); upload \(ids.count + 1): ENOSPC (full); the first and last play"
            )
        }
    }

    /// The reports of a first upload without the Device Control reports before them: hid-pidff resets a device
    /// that holds no effect (reset twice, stop all, enable actuators) before it uploads one on newer kernels
    /// (Debian 13's 6.12), where older ones (6.1) reset it when they bind.
    static func withoutReset(_ reports: [PIDReport]) -> (reset: [PIDReport], rest: [PIDReport]) {
        let reset = Array(reports.prefix { $0.kind == .deviceControl })
        return (reset, Array(reports.dropFirst(reset.count)))
    }

    /// Unplugged and plugged back in, the joystick is enumerated anew and hid-pidff binds it again: its new node
    /// offers the same effects, and an upload there loads block 1 (the driver reset the device at its init, or
    /// before that first upload).
    static func pidJoystickReplugs() async throws {
        try await withController(.pidJoystick) { device, nodes in
            try device.unplug()
            try require(access(nodes.rumbleNode, F_OK) != 0, "\(nodes.rumbleNode) is still there after the unplug")
            let before = device.records().count
            try device.replug()
            let replugged: EmulatedDeviceNodes
            do { replugged = try device.waitUntilBound(timeout: bindTimeout) } catch {
                throw TestFailure(reason: "\(error)")
            }
            try requirePIDEffects(replugged.rumbleNode)
            let initReports = pidReports(device, after: before).map(\.report)
            let client = try openClient(replugged.rumbleNode)
            defer { client.close() }
            let uploadBefore = device.records().count
            do { try client.upload(pidSine()) } catch { throw TestFailure(reason: "EVIOCSFF after replug: \(error)") }
            let (reset, upload) = withoutReset(pidReports(device, after: uploadBefore).map(\.report))
            try require(
                initReports.contains { $0.control == .reset } || reset.contains { $0.control == .reset },
                "no Device Control reset at the new init, nor before its first upload")
            let created = upload.first { $0.kind == .createNewEffect }
            try requireEqual(created?.blockIndex, 1, "block loaded after the replug")
            print("    replugged as \(replugged.rumbleNode): hid-pidff bound again, reset the device, block 1 loaded")
        }
    }
}
