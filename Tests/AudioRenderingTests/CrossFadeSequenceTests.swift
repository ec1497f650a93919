import AudioRendering
import Testing

@Suite("Cross-fade sequence")
struct CrossFadeSequenceTests {
    @Test("each track starts a fade before the previous one ends")
    func overlapping() {
        let sequence = CrossFadeSequence(durations: [3, 2, 4], crossFade: 0.5)
        #expect(sequence.starts == [0, 2.5, 4])
        #expect(sequence.fades == [0.5, 0.5])
        #expect(sequence.end == 8)
    }

    @Test("a fade is at most half of either track it joins")
    func shortTracks() {
        let sequence = CrossFadeSequence(durations: [0.4, 2, 0.2], crossFade: 0.5)
        #expect(sequence.fades == [0.2, 0.1])
        #expect(sequence.starts == [0, 0.2, 2.1])
        #expect(abs(sequence.end - 2.3) < 1e-12)
    }

    @Test("no fade plays the tracks back to back; odd numbers count as nothing")
    func edges() {
        #expect(CrossFadeSequence(durations: [1, 1], crossFade: 0).starts == [0, 1])
        #expect(CrossFadeSequence(durations: [1, .nan, 1], crossFade: 0.5).starts == [0, 1, 1])
        #expect(CrossFadeSequence(durations: [2], crossFade: 1) == CrossFadeSequence(durations: [2], crossFade: 9))
        let none = CrossFadeSequence(durations: [], crossFade: 1)
        #expect(none.starts.isEmpty && none.fades.isEmpty && none.end == 0)
    }
}
