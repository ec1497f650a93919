import HapticRendering
import Testing

@testable import haptics

/// How a live line (`play`'s, `emulate`'s, `virtual-pad`'s) is laid out to fit the terminal: its bars shrink, down
/// to `MotorMeter.narrowestWidth`, until the line leaves the last column free, and what still does not fit is cut.
struct LiveLineTests {
    static let full = MotorMagnitudes(strong: 1, weak: 0.5)

    static func playLine(columns: Int, length: Double? = 4.56) -> String {
        LiveLine.fitted(columns: columns, bars: MotorMeter.widths) {
            PlayReport.line(position: 1.23, length: length, levels: full, hd: nil, barWidth: $0)
        }
    }

    /// On a wide terminal nothing shrinks: the bars keep their 20 characters.
    @Test func aWideTerminalHasTheWholeLine() {
        let line = Self.playLine(columns: 200)
        #expect(line == "  1.23 / 4.56 s  strong [####################] 100%  weak [##########..........]  50%")
        #expect(line.count == 85)
    }

    /// On 80 columns the bars shrink to the widest that leaves the line within 79: 17 characters, 15 when looping
    /// (whose progress is longer).
    @Test func eightyColumnsShrinkTheBarsUntilTheLineLeavesTheLastColumnFree() {
        let line = Self.playLine(columns: 80)
        #expect(line == "  1.23 / 4.56 s  strong [#################] 100%  weak [#########........]  50%")
        #expect(line.count == 79)
        let looping = Self.playLine(columns: 80, length: nil)
        #expect(looping == "  1.23 s (looping)  strong [###############] 100%  weak [########.......]  50%")
    }

    /// On 40 columns even the narrowest bars do not fit: the line is cut at 39.
    @Test func fortyColumnsCutWhatTheNarrowestBarsLeaveOver() {
        let line = Self.playLine(columns: 40)
        #expect(line == "  1.23 / 4.56 s  strong [####] 100%  we")
        #expect(line.count == 39)
    }

    /// A device's raw meters (`emulate`, `virtual-pad`) follow the same rule from their 24 characters.
    @Test(arguments: [200, 80, 60, 30])
    func aDevicesRawMetersFollowTheSameRule(columns: Int) {
        let line = LiveLine.fitted(columns: columns, bars: MotorMeter.rawWidths) {
            MotorMeter.raw(Self.full, width: $0)
        }
        #expect(line.count <= columns - 1)
        if columns == 200 { #expect(line == MotorMeter.raw(Self.full)) }
    }

    /// The width is what the terminal says, else `COLUMNS` when it is a whole number above 0, else 80.
    @Test func theWidthIsTheTerminalsElseColumnsElseEighty() {
        #expect(LiveLine.columns(terminal: 132, environment: "40") == 132)
        #expect(LiveLine.columns(terminal: nil, environment: "40") == 40)
        #expect(LiveLine.columns(terminal: nil, environment: "0") == 80)
        #expect(LiveLine.columns(terminal: nil, environment: "wide") == 80)
        #expect(LiveLine.columns(terminal: nil, environment: nil) == 80)
    }
}
