// What the voice coils play now (`VoiceCoilMeter`, behind `HapticEngine.actuatorActivity`), from the blocks a
// stream wrote and when each is heard.
import Foundation
import Testing

@testable import LinuxHaptics

@Suite struct VoiceCoilMeterTests {
    /// A tap's burst (10 ms at 125 Hz, full) heard on time, then the silent blocks a stream writes after it:
    /// 20 ms in (where `haptics feedback` and `replay` read a tap) the meter holds the burst's peak; 100 ms on,
    /// silence. Over the last block alone it read 0 at 20 ms, and the commands printed each tap at 0.
    @Test func twentyMillisecondsIntoATapTheMeterHoldsItsBurstsPeak() {
        var meter = VoiceCoilMeter(sampleRate: 3000)
        let start: UInt64 = 5_000_000_000
        let burst = (0..<30).map { Float(sin(2 * Double.pi * 125 * Double($0) / 3000)) }
        let silence = [Float](repeating: 0, count: 30)
        meter.record(left: burst, right: burst, heard: start)
        for block in 1...20 {
            meter.record(left: silence, right: silence, heard: start + UInt64(block) * 10_000_000)
        }
        let tap = meter.activity(at: start + 20_000_000)
        #expect(tap.left > 0.9 && tap.right > 0.9, "\(tap)")
        let after = meter.activity(at: start + 100_000_000)
        #expect(after.left == 0 && after.right == 0, "\(after)")
    }
}
