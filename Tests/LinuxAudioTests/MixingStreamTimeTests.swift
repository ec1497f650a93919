import Testing

@testable import LinuxAudio

/// How far into a sound its frames are heard, for as long as a sound can play.
@Suite struct MixingStreamTimeTests {
    /// `frames × 10⁹` overflows 64 bits after about 1.8 × 10¹⁰ frames: 4.4 days of one sound at 48 kHz (a looping
    /// track), 1.1 days at 192 kHz. The stream's arithmetic trapped there and took the process with it.
    @Test(arguments: [(48_000, 20_000_000_000), (192_000, 18_446_744_074), (1_000_000, Int(Int32.max) * 9)])
    func framesPastTheProductsOverflowAreTimedExactly(rate: Int, frames: Int) {
        let nanoseconds = MixingStream.nanoseconds(frames: frames, rate: rate)
        let exact = Double(frames) / Double(rate) * 1e9
        #expect(abs(Double(nanoseconds) - exact) <= exact * 1e-15 + 1, "\(nanoseconds) against \(exact)")
    }

    @Test func aFrameIsItsShareOfASecondRoundedDown() {
        #expect(MixingStream.nanoseconds(frames: 1, rate: 48_000) == 20_833)
        #expect(MixingStream.nanoseconds(frames: 48_000, rate: 48_000) == 1_000_000_000)
        #expect(MixingStream.nanoseconds(frames: 0, rate: 44_100) == 0)
    }
}
