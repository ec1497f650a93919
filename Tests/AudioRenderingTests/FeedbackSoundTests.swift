import AudioRendering
import Testing

@Suite("Feedback sounds")
struct FeedbackSoundTests {
    @Test(
        "each sound is mono, under half a second, peaks at -3 dBFS, and is made the same every time",
        arguments: FeedbackSound.allCases)
    func recipe(sound: FeedbackSound) throws {
        let clip = try #require(sound.clip(sampleRate: 48_000))
        #expect(clip.channelCount == 1 && clip.duration > 0.1 && clip.duration < 0.5)
        let peak = clip.samples.map(abs).max() ?? 0
        #expect(abs(Double(peak) - FeedbackSound.peak) < 1e-6)
        #expect(clip.samples == sound.clip(sampleRate: 48_000)?.samples)
        #expect(sound.clip(sampleRate: 0) == nil)
    }
}
