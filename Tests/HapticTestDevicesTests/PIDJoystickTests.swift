import HapticTestDevices
import LinuxInput
import Testing

/// A main item of a report descriptor, with what hid-core would attach to it.
private struct Field {
    var main: UInt8
    var reportID: UInt8
    var bits: Int
    var count: Int
    var logicalMinimum: Int
    var usages: [UInt32]
    /// The usages of the Logical collections around the field, outermost first.
    var logicalCollections: [UInt32]
    var isArray: Bool
}

/// Walks the descriptor's short items as hid-core's parser does, for the items the PID joystick uses.
private func fields(_ descriptor: [UInt8]) -> [Field] {
    var result: [Field] = []
    var page: UInt32 = 0
    var reportID: UInt8 = 0
    var bits = 0
    var count = 0
    var minimum = 0
    var usages: [UInt32] = []
    var collections: [(kind: UInt8, usage: UInt32)] = []
    var index = 0
    while index < descriptor.count {
        let prefix = descriptor[index]
        let size = [0, 1, 2, 4][Int(prefix & 0x03)]
        let data = descriptor[(index + 1)..<(index + 1 + size)]
        var unsigned = 0
        for (offset, byte) in data.enumerated() { unsigned |= Int(byte) << (8 * offset) }
        let signed = size == 0 ? 0 : (unsigned << (64 - 8 * size)) >> (64 - 8 * size)
        switch prefix & 0xfc {
        case 0x04: page = UInt32(unsigned)
        case 0x14: minimum = signed
        case 0x74: bits = unsigned
        case 0x84: reportID = UInt8(unsigned)
        case 0x94: count = unsigned
        case 0x08: usages.append(page << 16 | UInt32(unsigned))
        case 0xa0:
            collections.append((UInt8(unsigned), usages.first ?? 0))
            usages = []
        case 0xc0: collections.removeLast()
        case 0x80, 0x90, 0xb0:
            result.append(
                Field(
                    main: prefix & 0xfc, reportID: reportID, bits: bits, count: count, logicalMinimum: minimum,
                    usages: usages, logicalCollections: collections.filter { $0.kind == 2 }.map(\.usage),
                    isArray: unsigned & 0x02 == 0 && unsigned & 0x01 == 0))
            usages = []
        default: break
        }
        index += 1 + size
    }
    return result
}

private func pid(_ usage: UInt32) -> UInt32 { 0x000f_0000 | usage }

@Suite("PID joystick (hid-pidff)")
struct PIDJoystickTests {
    private let output: UInt8 = 0x90
    private let feature: UInt8 = 0xb0

    @Test func everyPIDReportIsFoundByTheCollectionAroundItsFirstField() {
        let all = fields(PIDJoystick.reportDescriptor)
        let expected: [(PIDReportID, UInt32, UInt8)] = [
            (.setEffect, 0x21, output), (.setEnvelope, 0x5a, output), (.setPeriodic, 0x6e, output),
            (.setConstant, 0x73, output), (.effectOperation, 0x77, output), (.blockFree, 0x90, output),
            (.deviceControl, 0x96, output), (.deviceGain, 0x7d, output), (.createNewEffect, 0xab, feature),
            (.blockLoad, 0x89, feature), (.pool, 0x7f, feature),
        ]
        for (id, usage, main) in expected {
            let report = all.filter { $0.reportID == id.rawValue && $0.main == main }
            guard let first = report.first else {
                Issue.record("no report \(id)")
                continue
            }
            // The innermost logical collection, or (Create New Effect) the one around it.
            let around = first.logicalCollections
            #expect(around.last == pid(usage) || around.dropLast().last == pid(usage), "\(id): \(around)")
            // The length the decoder reads: the id and every field's bits.
            #expect(report.reduce(0) { $0 + $1.bits * $1.count } / 8 + 1 == id.length, "\(id) length")
            // hid-pidff writes a value field only when it has one value per usage.
            for field in report where !field.isArray && !field.usages.isEmpty {
                #expect(field.usages.count == field.count, "\(id): \(field.usages)")
            }
            // The PID arrays (effect type, operation, status, control) start at 1.
            for field in report where field.isArray { #expect(field.logicalMinimum == 1, "\(id)") }
        }
    }

    @Test func effectTypesAreListedAlikeInSetEffectAndCreateNewEffect() {
        let all = fields(PIDJoystick.reportDescriptor)
        let types = all.filter { $0.isArray && $0.logicalCollections.last == pid(0x25) }
        #expect(types.count == 2)
        #expect(types.first?.usages == types.last?.usages)
        #expect(types.first?.usages == PIDEffectType.allCases.map { pid(UInt32($0.usage)) })
    }

    @Test func decodesASetPeriodicAsHidPidffWritesIt() {
        // Block 3, magnitude 0x4000, offset -100, phase 0x8000 (written as 0x8000 * 0x7fff / 0xffff), period 250 ms.
        let phase = 0x8000 * 0x7fff / 0xffff
        let report: [UInt8] = [
            0x03, 3, 0x00, 0x40, 0x9c, 0xff, UInt8(phase & 0xff), UInt8(phase >> 8), 250, 0,
        ]
        let decoded = PIDJoystick.decode(report)
        #expect(decoded?.kind == .setPeriodic)
        #expect(decoded?.blockIndex == 3)
        #expect(decoded?.magnitude == 0x4000)
        #expect(decoded?.offset == -100)
        #expect(decoded?.period == 250)
        #expect(abs((decoded?.phase ?? 0) - 0x8000) <= 2)
    }

    @Test func decodesSetEffectEnvelopeOperationAndControl() {
        // Set Effect: block 1, sine (4th type), 1000 ms, repeat 0, delay 20 ms, gain 255, button 0, direction 64.
        let effect = PIDJoystick.decode([0x01, 1, 3, 0xe8, 0x03, 0, 0, 20, 0, 255, 0, 1, 64])
        #expect(effect?.effectType == .sine)
        #expect(effect?.duration == 1000)
        #expect(effect?.startDelay == 20)
        #expect(effect?.gain == 1)
        let envelope = PIDJoystick.decode([0x02, 1, 0x00, 0x10, 0x00, 0x20, 50, 0, 100, 0])
        #expect(envelope?.attackLevel == 0x1000)
        #expect(envelope?.fadeLevel == 0x2000)
        #expect(envelope?.attackTime == 50)
        #expect(envelope?.fadeTime == 100)
        let start = PIDJoystick.decode([0x05, 1, 1, 3])
        #expect(start?.operation == .start)
        #expect(start?.loopCount == 3)
        let stop = PIDJoystick.decode([0x05, 1, 3, 1])
        #expect(stop?.operation == .stop)
        #expect(stop?.loopCount == nil)
        #expect(PIDJoystick.decode([0x07, 4])?.control == .reset)
        #expect(PIDJoystick.decode([0x08, 0x10, 0x27])?.gain == 1)
        #expect(PIDJoystick.decode([0x06, 7])?.blockIndex == 7)
        #expect(PIDJoystick.decode([0x42, 0]) == nil)
        #expect(PIDJoystick.decode([0x03, 1]) == nil)
    }

    @Test func aFullPoolAnswersFullAndAFreedBlockIsHandedOutAgain() {
        var joystick = PIDJoystick(capacity: 2)
        let create: [UInt8] = [0x11, 4]  // a sine
        let first = joystick.receive(create, via: .setReport(.feature)).pid
        #expect(first?.status == .success)
        #expect(first?.blockIndex == 1)
        #expect(joystick.getReport(id: 0x12, type: .feature) == [0x12, 1, 1, 1, 0])
        #expect(joystick.receive(create, via: .setReport(.feature)).pid?.blockIndex == 2)
        let third = joystick.receive(create, via: .setReport(.feature)).pid
        #expect(third?.status == .full)
        #expect(third?.blockIndex == nil)
        #expect(joystick.getReport(id: 0x12, type: .feature)?[2] == 2)  // Full
        _ = joystick.receive([0x06, 1], via: .interrupt)
        #expect(joystick.receive(create, via: .setReport(.feature)).pid?.blockIndex == 1)
        _ = joystick.receive([0x07, 4], via: .interrupt)  // Reset
        #expect(joystick.loadedBlocks.isEmpty)
        // Pool: 2 blocks, 2 simultaneous, device managed.
        #expect(joystick.getReport(id: 0x13, type: .feature) == [0x13, 2, 0, 2, 1])
    }

    @Test func theModelIsListedWithoutRumble() {
        #expect(EmulatedModel(rawValue: "pid-joystick")?.hasRumbleMotors == false)
        #expect(EmulatedModel.allCases.filter { !$0.hasRumbleMotors } == [.pidJoystick])
        #expect(EmulatedModel.pidJoystick.overUSBGadget)
    }
}

@Suite("PID joystick playback")
struct PIDPlaybackTests {
    private func record(_ time: Double, _ bytes: [UInt8], _ joystick: inout PIDJoystick) -> PadRecord {
        let response = joystick.receive(bytes, via: bytes[0] >= 0x11 ? .setReport(.feature) : .interrupt)
        return PadRecord(
            outputAt: PadTimestamp(seconds: time), report: bytes, strong: 0, weak: 0, pid: response.pid)
    }

    /// A sine on block 1: 1000 ms, 100 ms delay, full magnitude, 100 ms period, attack from 0 over 200 ms, no
    /// fade; started at 10 s with `loops` plays.
    private func sine(loops: UInt8, gain: [UInt8]? = nil) -> [PadRecord] {
        var joystick = PIDJoystick()
        var records = [
            record(9.9, [0x11, 3], &joystick),
            record(9.91, [0x01, 1, 3, 0xe8, 0x03, 0, 0, 100, 0, 255, 0, 1, 0], &joystick),
            record(9.92, [0x03, 1, 0xff, 0x7f, 0, 0, 0, 0, 100, 0], &joystick),
            record(9.93, [0x02, 1, 0, 0, 0, 0, 200, 0, 0, 0], &joystick),
        ]
        if let gain { records.append(record(9.94, gain, &joystick)) }
        records.append(record(10, [0x05, 1, 1, loops], &joystick))
        return records
    }

    @Test func aSineWaitsItsDelayRampsUpAndEndsAfterItsDuration() {
        let playback = PIDPlayback(records: sine(loops: 1))
        #expect(playback.output(at: 10.05).magnitude == 0)
        // Halfway through the attack: half the magnitude.
        #expect(abs(playback.output(at: 10.2).magnitude - 0.5) < 1e-9)
        #expect(abs(playback.output(at: 10.5).magnitude - 1) < 1e-9)
        // A quarter period into a cycle: the sine's peak; three quarters: its trough.
        #expect(abs(playback.output(at: 10.525).force - 1) < 1e-6)
        #expect(abs(playback.output(at: 10.575).force + 1) < 1e-6)
        #expect(playback.output(at: 11.099).magnitude == 1)
        #expect(playback.output(at: 11.1001).magnitude == 0)
        #expect(playback.end == 11.1)
    }

    @Test func aLongerDurationSetAfterAPlayRanItsLengthDoesNotBringItBack() {
        var joystick = PIDJoystick()
        var records = sine(loops: 1)
        // At 11.2 s, after the play ended (11.1 s): a Set Effect of 5000 ms, the same block, no new start.
        records.append(record(11.2, [0x01, 1, 3, 0x88, 0x13, 0, 0, 100, 0, 255, 0, 1, 0], &joystick))
        let playback = PIDPlayback(records: records)
        #expect(playback.output(at: 11.3).magnitude == 0)
        #expect(playback.state(at: 11.3).blocks[1]?.startedAt == nil)
        // Started again, it plays its new length.
        records.append(record(12, [0x05, 1, 1, 1], &joystick))
        #expect(PIDPlayback(records: records).output(at: 16.5).magnitude == 1)
    }

    @Test func loopsPlayBackToBackWithTheirOwnAttack() {
        let playback = PIDPlayback(records: sine(loops: 2))
        #expect(abs(playback.output(at: 11.2).magnitude - 0.5) < 1e-9)
        #expect(playback.output(at: 12.1001).magnitude == 0)
        #expect(abs((playback.end ?? 0) - 12.1) < 1e-9)
    }

    @Test func deviceGainScalesTheOutput() {
        // Device gain 5000 of 10000.
        let playback = PIDPlayback(records: sine(loops: 1, gain: [0x08, 0x88, 0x13]))
        #expect(abs(playback.output(at: 10.5).magnitude - 0.5) < 1e-9)
    }

    @Test func stopPauseAndContinue() {
        var joystick = PIDJoystick()
        var records = sine(loops: 1)
        records.append(record(10.4, [0x07, 5], &joystick))  // Pause
        records.append(record(10.6, [0x07, 6], &joystick))  // Continue: the clock moved on by 200 ms
        let paused = PIDPlayback(records: records)
        #expect(paused.output(at: 10.5).magnitude == 0)
        #expect(paused.output(at: 11.2).magnitude == 1)
        #expect(paused.output(at: 11.3).magnitude == 0)
        records.append(record(10.7, [0x05, 1, 3, 0], &joystick))  // Stop
        #expect(PIDPlayback(records: records).output(at: 10.8).magnitude == 0)
    }

    @Test func theRecordFileKeepsEveryDecodedReport() throws {
        let records = sine(loops: 1)
        let text = records.map { $0.jsonLine() }.joined(separator: "\n")
        #expect(text.contains(#""pid":{"#))
        let read = try PadRecord.decodeLines(text)
        #expect(read == records)
        #expect(PIDPlayback.timeline(of: read) == PIDPlayback.timeline(of: records))
    }

    @Test func timelineSamplesEveryMillisecondFromTheFirstReport() {
        let timeline = PIDPlayback.timeline(of: sine(loops: 1))
        #expect(timeline.count == 1201)
        #expect(abs((timeline.first?.time ?? 0) - 9.9) < 1e-9)
        #expect(abs((timeline.last?.time ?? 0) - 11.1) < 1e-9)
        #expect(timeline.map(\.magnitude).max() == 1)
        #expect(timeline.first?.magnitude == 0)
    }

    @Test func startSoloStopAllDisableAndResetAct() {
        var joystick = PIDJoystick()
        // Two endless constant forces of 0x2000 on blocks 1 and 2, both started at 1 s.
        var records: [PadRecord] = []
        for block: UInt8 in [1, 2] {
            records.append(record(0.5, [0x11, 1], &joystick))
            records.append(record(0.5, [0x01, block, 1, 0xff, 0xff, 0, 0, 0, 0, 255, 0, 1, 0], &joystick))
            records.append(record(0.5, [0x04, block, 0x00, 0x20], &joystick))
            records.append(record(1, [0x05, block, 1, 1], &joystick))
        }
        let level = Double(0x2000) / 0x7fff
        #expect(abs(PIDPlayback(records: records).output(at: 1.5).magnitude - 2 * level) < 1e-9)
        let solo = records + [record(2, [0x05, 2, 2, 1], &joystick)]  // Start solo block 2
        #expect(abs(PIDPlayback(records: solo).output(at: 2.5).magnitude - level) < 1e-9)
        let disabled = records + [record(2, [0x07, 2], &joystick)]  // Disable actuators
        #expect(PIDPlayback(records: disabled).output(at: 2.5).magnitude == 0)
        let enabled = disabled + [record(3, [0x07, 1], &joystick)]  // Enable actuators: both still run
        #expect(abs(PIDPlayback(records: enabled).output(at: 3.5).magnitude - 2 * level) < 1e-9)
        let stopped = records + [record(2, [0x07, 3], &joystick)]  // Stop all effects
        #expect(PIDPlayback(records: stopped).output(at: 2.5).magnitude == 0)
        let reset = records + [record(2, [0x07, 4], &joystick), record(3, [0x05, 1, 1, 1], &joystick)]
        // Reset freed the blocks: starting block 1 afterwards plays nothing.
        #expect(PIDPlayback(records: reset).output(at: 3.5).magnitude == 0)
        #expect(PIDPlayback(records: reset).state(at: 2.5).blocks.isEmpty)
    }

    @Test func aConstantForceKeepsItsSign() {
        var joystick = PIDJoystick()
        let records = [
            record(1, [0x11, 1], &joystick),
            record(1, [0x01, 1, 1, 0xff, 0xff, 0, 0, 0, 0, 255, 0, 1, 0], &joystick),
            record(1, [0x04, 1, 0x00, 0xc0], &joystick),  // -0x4000
            record(1, [0x05, 1, 1, 1], &joystick),
        ]
        let output = PIDPlayback(records: records).output(at: 5)
        #expect(abs(output.force + Double(0x4000) / 0x7fff) < 1e-9)
        #expect(abs(output.magnitude - Double(0x4000) / 0x7fff) < 1e-9)
    }
}
