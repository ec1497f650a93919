// The replay's time line: chapters in order, each cue at its chapter's start plus its time, a pause between
// chapters after the last pattern has finished.
import LinuxHaptics
import AppHaptics
import Testing

@Suite struct ReplayPlanTests {
    static let chapters = [
        CueSheet.Chapter(
            number: 1, title: "one",
            cues: [
                .init(time: 0, pattern: "charge", moment: ""), .init(time: 1, pattern: "thud", moment: ""),
            ]),
        CueSheet.Chapter(number: 2, title: "empty", cues: []),
        CueSheet.Chapter(
            number: 3, title: "three",
            cues: [
                .init(time: 0.5, pattern: "tick", moment: "", count: 3, interval: 0.1)
            ]),
    ]
    static let durations = ["charge": 1.0, "thud": 0.27, "tick": 0]

    /// A chapter made in code is held to a sheet's rules: a count below 1 plays once (it trapped), and the
    /// chapter's plays stop at `CueSheet.maximumPlays` (`Int.max` tried to allocate them all), until 6 December.
    @Test func aChapterMadeInCodePlaysEachCueAtLeastOnceAndAtMostTheSheetsMost() {
        let chapter = CueSheet.Chapter(
            number: 1, title: "",
            cues: [
                .init(time: 0, pattern: "a", moment: "", count: -1),
                .init(time: 1, pattern: "b", moment: "", count: Int.max, interval: 0.001),
                .init(time: 2, pattern: "c", moment: "", count: 5, interval: 0.1),
            ])
        let timeline = chapter.timeline
        #expect(timeline.count == CueSheet.maximumPlays)
        #expect(timeline.filter { $0.pattern == "a" }.count == 1)
        #expect(timeline.filter { $0.pattern == "b" }.count == CueSheet.maximumPlays - 1)
    }

    /// Times, intervals, lengths and gaps made in code that are not numbers of seconds within a day are held to one
    /// (NaN as 0): the timeline is sorted and every offset a number (a NaN time left the timeline unsorted, and an
    /// infinite length or gap made offsets not numbers, until 6 December).
    @Test func numbersMadeInCodeAreHeldWithinADayAndTheTimelineIsSorted() {
        let chapter = CueSheet.Chapter(
            number: 1, title: "",
            cues: [
                .init(time: 2, pattern: "a", moment: ""), .init(time: .nan, pattern: "b", moment: ""),
                .init(time: -5, pattern: "c", moment: "", count: 3, interval: -1),
                .init(time: .infinity, pattern: "d", moment: ""),
                .init(time: 1, pattern: "e", moment: "", count: 2, interval: .nan),
            ])
        let timeline = chapter.timeline
        #expect(timeline.map(\.time) == [0, 0, 0, 0, 1, 1, 2, CueSheet.latestTime])
        #expect(timeline.map(\.pattern) == ["b", "c", "c", "c", "e", "e", "a", "d"])
        let plan = ReplayPlan(
            chapters: [chapter, chapter], patternDurations: ["a": .infinity, "b": .nan], chapterGap: -.infinity)
        #expect(plan.entries.allSatisfy { $0.offset.isFinite } && plan.duration.isFinite)
        #expect(plan.chapters.map(\.start) == [0, 2 + CueSheet.latestTime], "a, at 2 s, lasts a day; no gap")
    }

    @Test func chaptersFollowEachOtherWithAGap() {
        let plan = ReplayPlan(chapters: Self.chapters, patternDurations: Self.durations, chapterGap: 2)
        #expect(plan.entries.map(\.cue.pattern) == ["charge", "thud", "tick", "tick", "tick"])
        // Chapter 1 ends when thud ends (1.27); chapter 2 is empty and adds no pause; chapter 3 starts 2 s later.
        #expect(plan.chapters.map(\.start) == [0, 3.27, 3.27])
        let offsets = plan.entries.map(\.offset)
        let expected = [0, 1, 3.77, 3.87, 3.97]
        #expect(zip(offsets, expected).allSatisfy { abs($0 - $1) < 1e-9 }, "\(offsets)")
        #expect(abs(plan.duration - 3.97) < 1e-9)
    }

    @Test func oneChapterStartsAtZero() {
        let plan = ReplayPlan(chapters: [Self.chapters[2]], patternDurations: Self.durations)
        #expect(plan.entries.first?.offset == 0.5)
        #expect(plan.chapters.count == 1)
    }

    @Test func theAppsSheetLaysOutAllSixChapters() throws {
        let sheet = try CueSheet(contentsOf: AppAssets.url("cues.json"))
        let plan = ReplayPlan(chapters: sheet.chapters, patternDurations: [:])
        #expect(plan.chapters.map(\.number) == [1, 2, 3, 4, 5, 6])
        #expect(plan.entries.count == sheet.chapters.reduce(0) { $0 + $1.timeline.count })
        #expect(zip(plan.entries, plan.entries.dropFirst()).allSatisfy { $0.offset <= $1.offset }, "in time order")
    }
}
