// The cue sheet reader (`Haptics/cues.json`), and the replay laid out from what it accepts.
import LinuxHaptics
import AppHaptics
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A sheet is either rejected with a located reason, or accepted with chapters whose timelines and replay are
/// what `haptics replay` can schedule: finite, ordered times and every repetition present.
package enum CueSheetFuzzing {
    package static func run(_ bytes: UnsafeRawBufferPointer) {
        let sheet: CueSheet
        do {
            sheet = try CueSheet(data: Data(bytes))
        } catch {
            expect(!error.reason.isEmpty, "a rejected sheet without a reason: \(error)")
            return
        }
        var numbers: Set<Int> = []
        for chapter in sheet.chapters {
            expect(chapter.number >= 1 && numbers.insert(chapter.number).inserted, "chapter \(chapter.number)")
            checkTimeline(of: chapter)
        }
        let plan = ReplayPlan(chapters: sheet.chapters, patternDurations: [:])
        expect(plan.duration.isFinite && plan.duration >= 0, "replay duration \(plan.duration)")
        expect(zip(plan.entries, plan.entries.dropFirst()).allSatisfy { $0.offset <= $1.offset }, "replay order")
    }

    private static func checkTimeline(of chapter: CueSheet.Chapter) {
        let timeline = chapter.timeline
        let plays = chapter.cues.reduce(0) { $0 + $1.count }
        expect(timeline.count == plays, "chapter \(chapter.number): \(timeline.count) plays, cues say \(plays)")
        expect(timeline.allSatisfy { $0.time.isFinite && $0.time >= 0 }, "chapter \(chapter.number): play times")
        expect(zip(timeline, timeline.dropFirst()).allSatisfy { $0.time <= $1.time }, "timeline order")
        expect(chapter.cues.allSatisfy { !$0.pattern.isEmpty }, "chapter \(chapter.number): an empty pattern name")
    }
}
