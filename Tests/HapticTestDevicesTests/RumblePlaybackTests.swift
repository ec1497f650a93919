// The Switch Pro Controller's HD rumble and the Xbox Wireless Controller's four-motor command decoded into the
// record (fields and JSON), and the two playback models tests read them with: hold-last for the Switch actuators,
// the report's own duration, start delay, loop count and enable bits for the Xbox motors.
import HapticTestDevices
import LinuxInput
import Testing

private func at(_ seconds: Double) -> PadTimestamp { PadTimestamp(seconds: seconds) }

/// Left actuator: high band 160 Hz at full amplitude, low band 80 Hz at rest. Right: high 320 Hz at index 50
/// (0.340 of 1.003), low 160 Hz at index 100.
private let knownFrame = SwitchRumbleFrame(
    left: SwitchRumbleActuator(
        highFrequencyCode: 0x20, highAmplitudeIndex: 100, lowFrequencyCode: 0x20, lowAmplitudeIndex: 0),
    right: SwitchRumbleActuator(
        highFrequencyCode: 0x40, highAmplitudeIndex: 50, lowFrequencyCode: 0x40, lowAmplitudeIndex: 100))

private func rumbleReport(_ counter: UInt8, _ frame: SwitchRumbleFrame) -> [UInt8] { [0x10, counter] + frame.bytes }

private let neutral: [UInt8] = [0x00, 0x01, 0x40, 0x40, 0x00, 0x01, 0x40, 0x40]

/// A played packet whose left actuator's low band runs at `left` and right actuator's high band at `right`.
private func packet(_ counter: Int, left: Double, right: Double, played: Bool = true) -> SwitchRumblePacket {
    SwitchRumblePacket(
        counter: counter, played: played,
        left: .init(lowFrequency: 160, lowAmplitude: left, highFrequency: 320, highAmplitude: 0),
        right: .init(lowFrequency: 160, lowAmplitude: 0, highFrequency: 320, highAmplitude: right))
}

@Suite("Switch Pro Controller HD rumble in the record")
struct SwitchHDRumbleRecordTests {
    @Test func aRumbleReportCarriesBothBandsOfBothActuatorsAndItsCounter() throws {
        var pad = SwitchProControllerTests.probedPad()
        let response = pad.receive(rumbleReport(7, knownFrame), via: .interrupt)
        let hd = try #require(response.hdRumble)
        #expect(hd.counter == 7 && hd.played)
        #expect(
            hd.left
                == SwitchRumblePacket.Actuator(lowFrequency: 80, lowAmplitude: 0, highFrequency: 160, highAmplitude: 1))
        #expect(hd.right.lowFrequency == 160 && hd.right.lowAmplitude == 1)
        #expect(hd.right.highFrequency == 320 && hd.right.highAmplitude == 340.0 / 1003)
        // The two-level reading is unchanged: the left low band is strong, the right high band weak.
        #expect(
            response.motors
                == EmulatedMotorOutput(strong: 0, weak: 340.0 / 1003, strongFrequency: 80, weakFrequency: 320))
    }

    @Test func aSubcommandReportCarriesItsRumbleToo() throws {
        var pad = SwitchProControllerTests.probedPad()
        let report = [0x01, 0x0c] + knownFrame.bytes + [0x30, 0x01]
        let hd = try #require(pad.receive(report, via: .interrupt).hdRumble)
        #expect(hd.counter == 12 && hd.left.highAmplitude == 1)
    }

    @Test func rumbleBeforeVibrationIsEnabledIsRecordedAsIgnored() throws {
        var pad = SwitchProController()
        let hd = try #require(pad.receive(rumbleReport(0, knownFrame), via: .interrupt).hdRumble)
        #expect(!hd.played && hd.isAtRest)
        #expect(hd.left.highAmplitude == 1)
    }

    @Test func usbCommandsCarryNoRumble() {
        var pad = SwitchProController()
        #expect(pad.receive([0x80, 0x02], via: .interrupt).hdRumble == nil)
    }

    @Test func theNeutralFrameIsAtRest() throws {
        var pad = SwitchProControllerTests.probedPad()
        let hd = try #require(pad.receive([0x10, 0x01] + neutral, via: .interrupt).hdRumble)
        #expect(hd.isAtRest)
        #expect(hd.left.lowFrequency == 160 && hd.left.highFrequency == 320)
    }

    @Test func theJSONLineNestsTheBandsUnderHdRumble() throws {
        var pad = SwitchProControllerTests.probedPad()
        let report = rumbleReport(3, knownFrame)
        let response = pad.receive(report, via: .interrupt)
        let record = PadRecord(
            outputAt: at(1), report: report, strong: 0, weak: 0, hdRumble: response.hdRumble)
        let line = record.jsonLine()
        #expect(
            line.contains(
                #""hdRumble":{"counter":3,"left":{"highAmplitude":1,"highFrequency":160,"lowAmplitude":0,"lowFrequency":80},"played":true,"right":{"#
            ))
        #expect(try PadRecord(jsonLine: line) == record)
        #expect(!line.contains("xboxRumble"))
    }

    @Test func aRecordWrittenBeforeTheFieldExistedStillReads() throws {
        let line = #"{"event":"output","report":"1000","strong":0,"time":2,"weak":0}"#
        let record = try PadRecord(jsonLine: line)
        #expect(record.hdRumble == nil && record.xboxRumble == nil)
    }
}

@Suite("Switch Pro Controller actuators: hold-last playback")
struct SwitchRumblePlaybackTests {
    static let playback: SwitchRumblePlayback = {
        var playback = SwitchRumblePlayback()
        playback.receive(packet(0, left: 0.5, right: 0.25), at: at(1.00), reportID: 0x10)
        playback.receive(packet(1, left: 0, right: 0), at: at(1.03), reportID: 0x10)
        playback.receive(packet(2, left: 0.8, right: 0), at: at(1.06), reportID: 0x01)
        playback.receive(packet(3, left: 0, right: 0), at: at(1.10), reportID: 0x10)
        playback.receive(packet(4, left: 0, right: 0), at: at(1.13), reportID: 0x10)
        return playback
    }()

    @Test func theFrameInEffectIsTheLastOneReceivedHeldUntilTheNext() {
        let playback = Self.playback
        #expect(playback.frame(at: 0.99) == nil)
        #expect(playback.frame(at: 1.00)?.packet.counter == 0)
        #expect(playback.frame(at: 1.029)?.packet.counter == 0)
        #expect(playback.frame(at: 1.08)?.packet.counter == 2)
        #expect(playback.frame(at: 100)?.packet.counter == 4)
        #expect(!playback.isAtRest(at: 1.09) && playback.isAtRest(at: 1.04) && playback.isAtRest(at: 0.5))
    }

    @Test func restStartsAtTheFirstFrameOfTheFinalRunAtRest() {
        #expect(Self.playback.restingFrom == 1.10)
    }

    @Test func aWriterThatStopsOnAMovingFrameLeavesTheActuatorsMovingForEver() {
        var playback = SwitchRumblePlayback()
        playback.receive(packet(0, left: 0, right: 0), at: at(1))
        playback.receive(packet(1, left: 0.1, right: 0), at: at(2))
        #expect(playback.restingFrom == nil)
        #expect(!playback.isAtRest(at: 1e6))
    }

    @Test func actuatorsThatNeverMovedRestFromTheStart() {
        var playback = SwitchRumblePlayback()
        #expect(playback.restingFrom == -.infinity)
        playback.receive(packet(0, left: 1, right: 1, played: false), at: at(1))
        #expect(playback.restingFrom == -.infinity)
        #expect(playback.isAtRest(at: 2))
    }

    @Test func intervalsAreTheSpacingOfReportsInTheWindow() {
        let intervals = Self.playback.intervals(from: 1.02, through: 1.2)
        #expect(intervals.count == 3)
        #expect(zip(intervals, [0.03, 0.04, 0.03]).allSatisfy { abs($0 - $1) < 1e-9 })
        #expect(Self.playback.intervals(reportID: 0x10).count == 3)
    }

    @Test func aSweepReadsTheDominantBandOfEachActuatorPerFrame() {
        let sweep = SwitchRumblePlayback(
            records: [
                PadRecord(
                    outputAt: at(1), report: rumbleReport(0, knownFrame), strong: 0, weak: 0,
                    hdRumble: SwitchRumblePacket(
                        counter: 0, played: true,
                        left: .init(lowFrequency: 80, lowAmplitude: 0.2, highFrequency: 160, highAmplitude: 1),
                        right: .init(lowFrequency: 160, lowAmplitude: 0.5, highFrequency: 320, highAmplitude: 0.5))),
                PadRecord(outputAt: at(1.5), report: [0x80, 0x02], strong: 0, weak: 0),
                PadRecord(
                    outputAt: at(2), report: [0x10, 0x01] + neutral, strong: 0, weak: 0,
                    hdRumble: SwitchRumblePacket(counter: 1, played: true, frame: SwitchRumbleFrame(bytes: neutral))),
            ]
        ).sweep()
        #expect(sweep.map(\.time) == [1, 2])
        #expect(sweep[0].left == .init(frequency: 160, amplitude: 1))
        #expect(sweep[0].right == .init(frequency: 160, amplitude: 0.5))
        #expect(sweep[1].left == .rest && sweep[1].right == .rest)
    }
}

@Suite("Xbox Wireless Controller trigger motors in the record")
struct XboxRumbleRecordTests {
    @Test func aReportCarriesTheTriggerMagnitudesTheEnableMaskAndTheTiming() throws {
        var pad = XboxWirelessController()
        let response = pad.receive(bytes("03083200000019000a"), via: .interrupt)
        let command = try #require(response.xboxRumble)
        #expect(
            command
                == XboxRumblePacket(
                    enable: 8, leftTrigger: 0.5, rightTrigger: 0, strong: 0, weak: 0, duration: 25, startDelay: 0,
                    loopCount: 10))
        #expect(command.enables(.leftTrigger) && !command.enables(.rightTrigger) && !command.enables(.strong))
        #expect(response.motors == .off)
    }

    @Test func magnitudesAreFractionsOf100AndCapThere() throws {
        var pad = XboxWirelessController()
        let command = try #require(pad.receive(bytes("030f19c8644bff00eb"), via: .interrupt).xboxRumble)
        #expect(command.leftTrigger == 0.25 && command.rightTrigger == 1 && command.strong == 1)
        #expect(command.weak == 0.75 && command.loopCount == 0xeb)
    }

    @Test func theJSONLineNestsTheCommandUnderXboxRumble() throws {
        var pad = XboxWirelessController()
        let report = bytes("030f3200644bff00eb")
        let record = PadRecord(
            outputAt: at(1), report: report, strong: 1, weak: 0.75,
            xboxRumble: pad.receive(report, via: .interrupt).xboxRumble)
        let line = record.jsonLine()
        #expect(
            line.contains(
                #""xboxRumble":{"duration":255,"enable":15,"leftTrigger":0.5,"loopCount":235,"rightTrigger":0,"startDelay":0,"strong":1,"weak":0.75}"#
            ))
        #expect(try PadRecord(jsonLine: line) == record)
    }
}

@Suite("Xbox Wireless Controller motors: duration playback")
struct XboxRumblePlaybackTests {
    private static func command(
        enable: Int, left: Double = 0, right: Double = 0, strong: Double = 0, weak: Double = 0, duration: Int,
        delay: Int = 0, loops: Int = 0
    ) -> XboxRumblePacket {
        XboxRumblePacket(
            enable: enable, leftTrigger: left, rightTrigger: right, strong: strong, weak: weak, duration: duration,
            startDelay: delay, loopCount: loops)
    }

    @Test func enabledMotorsPlayForTheDurationThenStopByThemselves() {
        var playback = XboxRumblePlayback()
        playback.receive(Self.command(enable: 0x08, left: 0.5, right: 0.9, duration: 25), at: at(10))
        #expect(playback.levels(at: 10) == XboxMotorLevels(leftTrigger: 0.5))
        #expect(playback.levels(at: 10.249).leftTrigger == 0.5)
        #expect(playback.levels(at: 10.25) == .rest)
        #expect(playback.levels(at: 9.9) == .rest)
        #expect(abs(playback.restingFrom - 10.25) < 1e-9)
    }

    @Test func theStartDelayWaitsAtRestAndLoopsRepeatThePlay() {
        var playback = XboxRumblePlayback()
        playback.receive(Self.command(enable: 0x04, right: 0.3, duration: 10, delay: 5, loops: 2), at: at(1))
        #expect(playback.levels(at: 1.04) == .rest)
        #expect(playback.levels(at: 1.05).rightTrigger == 0.3)
        #expect(playback.levels(at: 1.34).rightTrigger == 0.3)
        #expect(playback.levels(at: 1.35) == .rest)
        #expect(abs(playback.restingFrom - 1.35) < 1e-9)
    }

    @Test func theDriversAndSDLsTimingRunForAboutTenMinutes() {
        let driver = XboxRumblePlayback.Command(
            arrival: 0, packet: Self.command(enable: 0x03, strong: 1, duration: 0xff, loops: 0xff))
        #expect(abs(driver.end - 652.8) < 1e-9)
        let sdl = XboxRumblePlayback.Command(
            arrival: 0, packet: Self.command(enable: 0x0f, left: 1, duration: 0xff, loops: 0xeb))
        #expect(abs(sdl.end - 601.8) < 1e-9)
    }

    @Test func aClearEnableBitStopsThatMotor() {
        var playback = XboxRumblePlayback()
        playback.receive(Self.command(enable: 0x0f, left: 0.6, right: 0.6, strong: 0.2, duration: 0xff), at: at(1))
        // hid-microsoft's rumble report: body motors only, triggers at 0.
        playback.receive(Self.command(enable: 0x03, strong: 0.4, weak: 0.1, duration: 0xff, loops: 0xff), at: at(2))
        #expect(playback.levels(at: 1.5) == XboxMotorLevels(leftTrigger: 0.6, rightTrigger: 0.6, strong: 0.2))
        #expect(playback.levels(at: 2.5) == XboxMotorLevels(strong: 0.4, weak: 0.1))
        // A magnitude the enable mask leaves off plays nothing.
        playback.receive(Self.command(enable: 0x08, left: 0.7, right: 1, strong: 1, weak: 1, duration: 10), at: at(3))
        #expect(playback.levels(at: 3.05) == XboxMotorLevels(leftTrigger: 0.7))
    }

    @Test func restAccountsForReplacedAndExpiredCommands() {
        var playback = XboxRumblePlayback()
        playback.receive(Self.command(enable: 0x08, left: 1, duration: 100), at: at(1))
        playback.receive(Self.command(enable: 0x08, left: 1, duration: 20), at: at(1.5))
        playback.receive(Self.command(enable: 0x0f, duration: 0xff), at: at(1.6))
        // The second command, replaced at 1.6 by one at rest, was the last to move a motor.
        #expect(abs(playback.restingFrom - 1.6) < 1e-9)
        var expired = XboxRumblePlayback()
        expired.receive(Self.command(enable: 0x08, left: 1, duration: 20), at: at(1))
        expired.receive(Self.command(enable: 0x0f, duration: 0xff), at: at(3))
        #expect(abs(expired.restingFrom - 1.2) < 1e-9)
        #expect(expired.levels(at: 2) == .rest)
    }

    @Test func aZeroDurationOrNoCommandPlaysNothing() {
        var playback = XboxRumblePlayback()
        #expect(playback.restingFrom == -.infinity)
        playback.receive(Self.command(enable: 0x0f, left: 1, right: 1, strong: 1, weak: 1, duration: 0), at: at(1))
        #expect(playback.levels(at: 1) == .rest)
        #expect(playback.restingFrom == -.infinity)
    }

    @Test func theModelReadsTheRecordInOrder() {
        let records = [
            PadRecord(
                outputAt: at(1), report: bytes("03083200000019000a"), strong: 0, weak: 0,
                xboxRumble: Self.command(enable: 0x08, left: 0.5, duration: 25, loops: 10)),
            PadRecord(outputAt: at(2), report: [0x03], strong: 0, weak: 0),
        ]
        let playback = XboxRumblePlayback(records: records)
        #expect(playback.commands.count == 1)
        #expect(abs(playback.restingFrom - (1 + 0.25 * 11)) < 1e-9)
    }
}
