// When each cue of a replay plays: the chosen chapters one after another on one time line, each chapter
// given room for its last pattern to finish plus a pause, so a designer feels the chapters apart.

/// A cue sheet laid out for `haptics replay`: every play with its offset from the start of the replay.
public struct ReplayPlan: Sendable, Hashable {
    /// One play of the replay.
    public struct Entry: Sendable, Hashable {
        public var cue: TimedCue
        /// Seconds from the start of the replay.
        public var offset: Double
    }

    /// One chapter's place on the time line.
    public struct ChapterSpan: Sendable, Hashable {
        public var number: Int
        public var title: String
        /// Seconds from the start of the replay.
        public var start: Double
        /// When its last pattern has finished (seconds from the start of the replay).
        public var end: Double
    }

    public var entries: [Entry]
    public var chapters: [ChapterSpan]
    /// When the last pattern has finished, in seconds from the start of the replay.
    public var duration: Double

    /// A pause between chapters long enough to tell them apart by feel.
    public static let defaultChapterGap = 1.0

    /// Lays out `chapters` in the order given. `patternDurations` gives each pattern's length in seconds
    /// (`HapticPattern.duration`); a pattern without one counts as an instant. A length or gap that is not a number
    /// of seconds within 0 ... `CueSheet.latestTime` is held to it (one that is not a number counts as 0), so every
    /// offset is a number (an infinite length or gap made them infinite or not numbers, until 6 December).
    public init(
        chapters: [CueSheet.Chapter], patternDurations: [String: Double], chapterGap: Double = defaultChapterGap
    ) {
        let chapterGap = CueSheet.heldTime(chapterGap)
        var entries: [Entry] = []
        var spans: [ChapterSpan] = []
        var start = 0.0
        for (index, chapter) in chapters.enumerated() {
            let timeline = chapter.timeline
            var end = start
            for cue in timeline {
                let offset = start + cue.time
                entries.append(Entry(cue: cue, offset: offset))
                end = Swift.max(end, offset + CueSheet.heldTime(patternDurations[cue.pattern] ?? 0))
            }
            spans.append(ChapterSpan(number: chapter.number, title: chapter.title, start: start, end: end))
            // No pause after the last chapter, nor after one without cues (nothing to tell apart).
            let isLast = index == chapters.count - 1
            start = isLast || timeline.isEmpty ? end : end + chapterGap
        }
        self.entries = entries
        self.chapters = spans
        self.duration = start
    }
}
