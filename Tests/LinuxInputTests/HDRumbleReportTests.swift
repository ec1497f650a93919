// The Switch controllers' HD rumble bytes and the Xbox pad's report 3, as we write them through hidraw.
import Testing

@testable import LinuxInput

@Suite struct SwitchHDRumbleEncodingTests {
    @Test func everyFrequencyCodeOfBothBandsRoundTripsThroughItsTableFrequency() {
        for code in UInt8(0)..<128 {
            let high = SwitchRumbleActuator.frequency(exponent: 0x60 + Int(code))
            let low = SwitchRumbleActuator.frequency(exponent: 0x40 + Int(code))
            #expect(SwitchRumbleActuator.code(nearest: high, base: 0x60) == code)
            #expect(SwitchRumbleActuator.code(nearest: low, base: 0x40) == code)
        }
    }

    @Test func everyAmplitudeStepRoundTripsThroughItsLevel() {
        let steps = SwitchRumbleActuator.amplitudeSteps
        for index in steps.indices {
            let level = Double(steps[index]) / Double(SwitchRumbleActuator.maximumAmplitude)
            #expect(SwitchRumbleActuator.amplitudeIndex(nearest: level) == UInt8(index))
        }
    }

    @Test func bandsEncodeToTheBytesThatDecodeToThemWithinOneCodeStep() {
        let actuator = SwitchRumbleActuator(
            low: .init(frequency: 100, amplitude: 0.5), high: .init(frequency: 400, amplitude: 0.25))
        let decoded = SwitchRumbleActuator(bytes: actuator.bytes)
        let step = 1.0219  // 2^(1/32): one code apart
        #expect(decoded.lowFrequency / 100 < step && 100 / decoded.lowFrequency < step)
        #expect(decoded.highFrequency / 400 < step && 400 / decoded.highFrequency < step)
        #expect(abs(decoded.lowAmplitude - 0.5) < 0.02)
        #expect(abs(decoded.highAmplitude - 0.25) < 0.02)
    }

    @Test func theRestStateIsTheNeutralBytesAndSilent() {
        #expect(SwitchRumbleActuator.rest.bytes == [0x00, 0x01, 0x40, 0x40])
        #expect(SwitchRumbleActuator.rest.isAtRest)
        let silent = SwitchRumbleActuator(
            low: .init(frequency: 160, amplitude: 0), high: .init(frequency: 320, amplitude: 0))
        #expect(silent.bytes == SwitchRumbleActuator.rest.bytes)
    }

    @Test func noAmplitudeEncodesAboveTheSafeMaximumStepAndNonNumbersAreSilence() {
        for amplitude in [1.0, 1.5, 100] {
            let actuator = SwitchRumbleActuator(
                low: .init(frequency: 160, amplitude: amplitude), high: .init(frequency: 320, amplitude: amplitude))
            #expect(actuator.lowAmplitudeIndex == 100 && actuator.highAmplitudeIndex == 100)
            #expect(actuator.bytes[1] >> 1 == 100 && actuator.bytes[3] == 0x40 + 50)
        }
        #expect(SwitchRumbleActuator.amplitudeIndex(nearest: .nan) == 0)
        #expect(SwitchRumbleActuator.amplitudeIndex(nearest: .infinity) == 0)
        #expect(SwitchRumbleActuator.amplitudeIndex(nearest: -1) == 0)
    }

    @Test func frequenciesBeyondABandClampToItsEnds() {
        let actuator = SwitchRumbleActuator(
            low: .init(frequency: 5, amplitude: 1), high: .init(frequency: 5000, amplitude: 1))
        #expect(actuator.lowFrequencyCode == 1)
        #expect(actuator.highFrequencyCode == 127)
        #expect(SwitchRumbleActuator.code(nearest: .infinity, base: 0x60) == 127)
        #expect(SwitchRumbleActuator.code(nearest: .infinity, base: 0x40) == 127)
        #expect(SwitchRumbleActuator.code(nearest: .nan, base: 0x60) == 0)
    }

    /// Every split of full amplitude between the two bands (in steps of 0.0005), and pairs asking for less:
    /// their steps never sum past the largest, and each band stays within one step of what it asked for. Rounded
    /// each on its own, 0.052 and 0.948 came to 56 + 960 = 1016 thousandths.
    @Test func twoBandsAskingForAtMostFullAmplitudeTogetherNeverEncodePastTheLargestStep() {
        let steps = SwitchRumbleActuator.amplitudeSteps
        for twoThousandths in 0...2_000 {
            let low = Double(twoThousandths) / 2_000
            for high in [1 - low, (1 - low) * 0.999, (1 - low) / 2] {
                let actuator = SwitchRumbleActuator(
                    low: .init(frequency: 160, amplitude: low), high: .init(frequency: 320, amplitude: high))
                let lowStep = steps[Int(actuator.lowAmplitudeIndex)]
                let highStep = steps[Int(actuator.highAmplitudeIndex)]
                #expect(lowStep + highStep <= SwitchRumbleActuator.maximumAmplitude, "\(low) + \(high)")
                let nearest = (
                    low: Int(SwitchRumbleActuator.amplitudeIndex(nearest: low)),
                    high: Int(SwitchRumbleActuator.amplitudeIndex(nearest: high))
                )
                #expect(
                    nearest.low - Int(actuator.lowAmplitudeIndex) + nearest.high - Int(actuator.highAmplitudeIndex) <= 1
                )
            }
        }
    }

    @Test func reportTenCarriesTheCounterModuloSixteenThenLeftThenRight() throws {
        let left = SwitchRumbleActuator(
            low: .init(frequency: 80, amplitude: 1), high: .init(frequency: 320, amplitude: 0))
        let report = SwitchRumbleReport(counter: 0x13, frame: SwitchRumbleFrame(left: left, right: .rest))
        #expect(report.bytes.count == SwitchRumbleReport.length)
        #expect(Array(report.bytes[0...1]) == [0x10, 0x03])
        #expect(Array(report.bytes[2..<6]) == left.bytes)
        #expect(Array(report.bytes[6..<10]) == [0x00, 0x01, 0x40, 0x40])
        #expect(try #require(SwitchRumbleReport(bytes: report.bytes)) == report)
        #expect(SwitchRumbleReport.rest(counter: 4).bytes == [0x10, 4, 0, 1, 0x40, 0x40, 0, 1, 0x40, 0x40])
    }
}

@Suite struct XboxTriggerReportTests {
    @Test func reportThreeCarriesTheEnableMaskTheFourMotorsAndTheTiming() throws {
        let report = XboxRumbleReport(
            enable: XboxRumbleReport.enableLeftTrigger | XboxRumbleReport.enableRightTrigger, leftTrigger: 40,
            rightTrigger: 0, strong: 0, weak: 0, duration: 12, startDelay: 0, loopCount: 0)
        #expect(report.bytes == [0x03, 0x0c, 40, 0, 0, 0, 12, 0, 0])
        #expect(try #require(XboxRumbleReport(bytes: report.bytes)) == report)
        #expect(XboxRumbleReport(bytes: [0x01] + Array(report.bytes.dropFirst())) == nil)
    }
}
