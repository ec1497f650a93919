import AudioRendering
import LinuxAudio
import Testing

@Suite("Committed feedback sounds")
struct FeedbackSoundFileTests {
    /// Haptics/, found from this file's place in the repository.
    static let assets: String = {
        var path = #filePath.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        path.removeLast(3)
        return path.joined(separator: "/") + "/Haptics"
    }()

    @Test("Haptics/*.wav are what scripts/make-sounds makes from the recipes", arguments: FeedbackSound.allCases)
    func committedFile(sound: FeedbackSound) throws {
        let file = try AudioFile.decode("\(Self.assets)/\(sound.fileName)")
        let recipe = try #require(sound.clip(sampleRate: 48_000))
        #expect(file.sampleRate == 48_000 && file.channelCount == 1 && file.frameCount == recipe.frameCount)
        let worst = zip(file.samples, recipe.samples).map { abs($0 - $1) }.max() ?? 1
        // 16-bit samples: libsndfile writes x·32767 rounded and reads n/32768, within two steps of x.
        #expect(worst <= 2.0 / 32768, "\(sound.fileName) is off its recipe by \(worst): run scripts/make-sounds")
    }
}
