import Testing
@testable import HapticTestDevices
import LinuxInput
@_spi(Internals) import LinuxSystem

@Suite struct VirtualPadRecordTests {
    static let envelope = ForceFeedbackEnvelope(attackLength: 100, attackLevel: 1, fadeLength: 200, fadeLevel: 0x7fff)

    static let effects: [ForceFeedbackEffect] = [
        ForceFeedbackEffect(id: 3, kind: .rumble(strong: 0x8000, weak: 0), replayLength: 5000, replayDelay: 1000),
        ForceFeedbackEffect(
            id: 0,
            kind: .periodic(
                waveform: .sawUp, period: 10, magnitude: -0x7fff, offset: -5, phase: 90, envelope: envelope),
            direction: 0x4000, triggerButton: 0x130, triggerInterval: 7, replayLength: 20000, replayDelay: 1000),
        ForceFeedbackEffect(id: 1, kind: .constant(level: 0x2000, envelope: envelope), direction: 0x6000),
        ForceFeedbackEffect(id: 2, kind: .ramp(startLevel: -100, endLevel: 100, envelope: envelope)),
        ForceFeedbackEffect(
            id: 4,
            kind: .condition(
                type: .spring,
                axes: [
                    ForceFeedbackCondition(
                        rightSaturation: 0x7fff, leftSaturation: 1, rightCoefficient: -2, leftCoefficient: 3,
                        deadband: 4, center: -5),
                    ForceFeedbackCondition(center: 6),
                ])),
    ]

    static let records: [PadRecord] =
        effects.map {
            PadRecord(
                event: .upload, time: PadTimestamp(microseconds: 12_000_045), id: $0.id, effect: $0, replacing: false,
                retval: 0)
        } + [
            PadRecord(
                event: .upload, time: PadTimestamp(microseconds: 12_000_046), id: 5, effect: effects[0],
                replacing: true, retval: -28),
            PadRecord(event: .play, time: PadTimestamp(microseconds: 12_100_000), id: 3, count: 2),
            PadRecord(event: .stop, time: PadTimestamp(microseconds: 12_200_000), id: 3),
            PadRecord(event: .gain, time: PadTimestamp(microseconds: 12_300_000), value: 0xc000),
            PadRecord(event: .autocenter, time: PadTimestamp(microseconds: 12_300_001), value: 0),
            PadRecord(event: .erase, time: PadTimestamp(microseconds: 98_765_432_101), id: 3, retval: 0),
        ]

    @Test func everyRecordSurvivesAJSONLineRoundTrip() throws {
        for record in Self.records {
            let line = record.jsonLine()
            #expect(!line.contains("\n"))
            #expect(try PadRecord(jsonLine: line) == record)
        }
        let file = Self.records.map { $0.jsonLine() + "\n" }.joined()
        #expect(try PadRecord.decodeLines(file) == Self.records)
    }

    @Test func playLineHasTheDocumentedShape() {
        let play = PadRecord(event: .play, time: PadTimestamp(microseconds: 12_345_678), id: 3, count: 1)
        #expect(play.jsonLine() == #"{"count":1,"event":"play","id":3,"time":12.345678}"#)
    }

    @Test func uploadLineNamesTheKernelFields() {
        let line = Self.records[0].jsonLine()
        for fragment in [
            #""event":"upload""#, #""type":"rumble""#, #""rumble":{"strongMagnitude":32768,"weakMagnitude":0}"#,
            #""replay":{"delay":1000,"length":5000}"#, #""trigger":{"button":0,"interval":0}"#, #""retval":0"#,
            #""time":12.000045"#,
        ] {
            #expect(line.contains(fragment), "\(fragment) missing from \(line)")
        }
        #expect(Self.records[1].jsonLine().contains(#""waveform":"saw_up""#))
    }

    @Test func timestampsPrintWithSixDecimals() {
        #expect(PadTimestamp(microseconds: 12_000_045).description == "12.000045")
        #expect(PadTimestamp(seconds: 12.000045).microseconds == 12_000_045)
    }

    @Test func unknownTypesAreRejected() {
        #expect(throws: (any Error).self) {
            try PadRecord(jsonLine: #"{"event":"upload","time":1,"effect":{"type":"wobble","id":0}}"#)
        }
        #expect(throws: (any Error).self) { try PadRecord(jsonLine: #"{"event":"shake","time":1}"#) }
    }

    /// Found by fuzzing (docs/reliability.md): a time too large for `Int64` microseconds trapped in the reader.
    @Test(arguments: ["1e300", "1144444444444444444444.004926", "1e12000", "-0.5", "-1e300"])
    func timesNoMonotonicClockShowsAreRejected(_ time: String) {
        #expect(throws: DecodingError.self) { try PadRecord(jsonLine: #"{"event":"gain","time":\#(time),"value":1}"#) }
    }

    @Test func theLatestTimeStillReads() throws {
        let record = try PadRecord(jsonLine: #"{"event":"gain","time":1e12,"value":1}"#)
        #expect(record.time.microseconds == 1_000_000_000_000_000_000)
    }

    @Test func negativeTimestampsPrintTheirSign() {
        #expect(PadTimestamp(microseconds: -500_000).description == "-0.500000")
        #expect(PadTimestamp(microseconds: -12_000_045).description == "-12.000045")
    }
}

@Suite struct VirtualPadConfigurationTests {
    @Test func effectsListParsesKernelAndDashedNames() throws {
        #expect(
            try VirtualPadConfiguration.features(parsing: "rumble,periodic,sine,square,triangle,saw-up,saw_down,gain")
                == VirtualPadConfiguration.defaultFeatures)
        #expect(try VirtualPadConfiguration.features(parsing: " FF_RUMBLE , constant") == [.rumble, .constant])
    }

    @Test(arguments: ["wobble", "", "rumble,,gain", "rumble;gain"])
    func effectsListRejectsUnknownNames(list: String) {
        #expect(throws: VirtualPadError.self) { try VirtualPadConfiguration.features(parsing: list) }
    }

    @Test func configurationLimits() throws {
        try VirtualPadConfiguration().validate()
        try VirtualPadConfiguration(maxEffects: VirtualPadConfiguration.maximumEffects).validate()
        #expect(throws: VirtualPadError.self) { try VirtualPadConfiguration(maxEffects: 0).validate() }
        #expect(throws: VirtualPadError.self) { try VirtualPadConfiguration(maxEffects: 97).validate() }
        #expect(throws: VirtualPadError.self) { try VirtualPadConfiguration(features: []).validate() }
        #expect(throws: VirtualPadError.self) { try VirtualPadConfiguration(name: "").validate() }
        #expect(throws: VirtualPadError.self) { try VirtualPadConfiguration(failUploadsAfter: -1).validate() }
    }

    @Test func errorsSayWhatToDo() {
        let missing = VirtualPadError.uinputMissing(
            SystemCallError(.noSuchFileOrDirectory, call: "open(/dev/uinput)"))
        #expect(missing.description.contains("modprobe uinput"))
        let denied = VirtualPadError.permissionDenied(
            SystemCallError(.permissionDenied, call: "open(/dev/uinput)"))
        #expect(denied.description.contains("root"))
        #expect(denied.description.contains("/dev/uinput"))
    }
}
