// Draws the waveform renderer's figures for docs/rendering.md ("Waveforms for voice coils") into the folder given
// (scripts/waveform-figures: docs/images). Every curve is computed by HapticRendering itself; the sample plots
// are rendered patterns, and the frequency plot is measured from the rendered carrier's zero crossings.
import AHAPFiles
import Foundation
import HapticRendering

/// One plot area: data ranges mapped onto a rectangle of the picture.
struct Panel {
    var left: Double
    var top: Double
    var width: Double
    var height: Double
    var xRange: ClosedRange<Double>
    var yRange: ClosedRange<Double>

    func x(_ value: Double) -> Double {
        left + width * (value - xRange.lowerBound) / (xRange.upperBound - xRange.lowerBound)
    }

    func y(_ value: Double) -> Double {
        top + height * (1 - (value - yRange.lowerBound) / (yRange.upperBound - yRange.lowerBound))
    }

    /// A frame, ticks with labels, axis titles and a title.
    func axes(title: String, xLabel: String, yLabel: String, xTicks: [Double], yTicks: [Double]) -> String {
        var svg = "<rect x=\"\(n(left))\" y=\"\(n(top))\" width=\"\(n(width))\" height=\"\(n(height))\" "
        svg += "fill=\"none\" stroke=\"#888\"/>\n"
        for tick in xTicks {
            svg += "<line x1=\"\(n(x(tick)))\" y1=\"\(n(top))\" x2=\"\(n(x(tick)))\" y2=\"\(n(top + height))\" "
            svg += "stroke=\"#ddd\"/>\n"
            svg += "<text x=\"\(n(x(tick)))\" y=\"\(n(top + height + 14))\" font-size=\"11\" "
            svg += "text-anchor=\"middle\">\(label(tick))</text>\n"
        }
        for tick in yTicks {
            svg += "<line x1=\"\(n(left))\" y1=\"\(n(y(tick)))\" x2=\"\(n(left + width))\" y2=\"\(n(y(tick)))\" "
            svg += "stroke=\"#ddd\"/>\n"
            svg += "<text x=\"\(n(left - 5))\" y=\"\(n(y(tick) + 4))\" font-size=\"11\" "
            svg += "text-anchor=\"end\">\(label(tick))</text>\n"
        }
        svg += "<text x=\"\(n(left + width / 2))\" y=\"\(n(top + height + 30))\" font-size=\"12\" "
        svg += "text-anchor=\"middle\">\(xLabel)</text>\n"
        svg += "<text x=\"\(n(left - 40))\" y=\"\(n(top + height / 2))\" font-size=\"12\" text-anchor=\"middle\" "
        svg += "transform=\"rotate(-90 \(n(left - 40)) \(n(top + height / 2)))\">\(yLabel)</text>\n"
        svg += "<text x=\"\(n(left))\" y=\"\(n(top - 8))\" font-size=\"13\" font-weight=\"bold\">\(title)</text>\n"
        return svg
    }

    /// A polyline through `points` (data coordinates).
    func line(_ points: [(Double, Double)], color: String, width: Double = 1.5, dashed: Bool = false) -> String {
        let coordinates = points.map { "\(n(x($0.0))),\(n(y($0.1)))" }.joined(separator: " ")
        let dash = dashed ? " stroke-dasharray=\"5 4\"" : ""
        return
            "<polyline points=\"\(coordinates)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"\(width)\"\(dash)/>\n"
    }

    /// Small dots at `points`.
    func dots(_ points: [(Double, Double)], color: String) -> String {
        points.map { "<circle cx=\"\(n(x($0.0)))\" cy=\"\(n(y($0.1)))\" r=\"1.6\" fill=\"\(color)\"/>\n" }.joined()
    }

    /// A legend, one coloured entry per line, in the panel's top left corner.
    func legend(_ entries: [(text: String, color: String)]) -> String {
        var svg = ""
        for (index, entry) in entries.enumerated() {
            let y = top + 16 + 15 * Double(index)
            svg += "<line x1=\"\(n(left + 8))\" y1=\"\(n(y - 4))\" x2=\"\(n(left + 26))\" y2=\"\(n(y - 4))\" "
            svg += "stroke=\"\(entry.color)\" stroke-width=\"2\"/>\n"
            svg += "<text x=\"\(n(left + 31))\" y=\"\(n(y))\" font-size=\"11\">\(entry.text)</text>\n"
        }
        return svg
    }
}

/// A coordinate with one decimal.
func n(_ value: Double) -> String {
    let tenths = (value * 10).rounded()
    return tenths.truncatingRemainder(dividingBy: 10) == 0 ? "\(Int(tenths / 10))" : "\(tenths / 10)"
}

/// A tick label: up to three decimals, trailing zeros dropped.
func label(_ value: Double) -> String {
    let thousandths = Int((value * 1000).rounded())
    if thousandths % 1000 == 0 { return "\(thousandths / 1000)" }
    var text = "\(Double(thousandths) / 1000)"
    while text.hasSuffix("0") { text.removeLast() }
    return text
}

func document(width: Double, height: Double, _ body: String) -> String {
    """
    <svg xmlns="http://www.w3.org/2000/svg" width="\(n(width))" height="\(n(height))" \
    viewBox="0 0 \(n(width)) \(n(height))" font-family="sans-serif">
    <rect width="100%" height="100%" fill="white"/>
    \(body)</svg>

    """
}

let blue = "#1f77b4"
let orange = "#ff7f0e"
let green = "#2ca02c"
let grey = "#777"

func steps(_ from: Double, _ to: Double, count: Int) -> [Double] {
    (0...count).map { from + (to - from) * Double($0) / Double(count) }
}

/// Sharpness to frequency: the voice coils' map beside the motors' native periodic one.
func mapFigure() -> String {
    let panel = Panel(left: 60, top: 30, width: 460, height: 260, xRange: 0...1, yRange: 0...320)
    let sharpness = steps(0, 1, count: 200)
    var body = panel.axes(
        title: "Sharpness to carrier frequency", xLabel: "sharpness", yLabel: "Hz",
        xTicks: steps(0, 1, count: 4), yTicks: [0, 50, 100, 150, 200, 250, 300])
    body += panel.line(sharpness.map { ($0, SharpnessFrequencyMap.voiceCoil.frequency(sharpness: $0)) }, color: blue)
    body += panel.line(
        sharpness.map { ($0, NativePeriodicProgram.frequency(sharpness: $0)) }, color: grey, dashed: true)
    body += panel.legend([
        ("voice coils: 50 Hz to 300 Hz, geometric", blue), ("FF_PERIODIC motors: 40 Hz to 200 Hz", grey),
    ])
    return document(width: 540, height: 330, body)
}

/// Level to amplitude at three carrier frequencies, and the limiter.
func amplitudeFigure() -> String {
    let curve = Panel(left: 60, top: 30, width: 300, height: 260, xRange: 0...1, yRange: 0...1)
    let levels = steps(0, 1, count: 200)
    var body = curve.axes(
        title: "Level to amplitude (felt curve)", xLabel: "level (intensity x envelope)", yLabel: "amplitude",
        xTicks: steps(0, 1, count: 4), yTicks: steps(0, 1, count: 4))
    for (hertz, color) in [(50.0, blue), (122.5, green), (300.0, orange)] {
        body += curve.line(levels.map { ($0, VibrationAmplitude.amplitude(level: $0, frequency: hertz)) }, color: color)
    }
    body += curve.legend([("50 Hz (exponent 1)", blue), ("122.5 Hz", green), ("300 Hz (1 / 0.6)", orange)])

    let limiter = Panel(left: 430, top: 30, width: 300, height: 260, xRange: 0...3, yRange: 0...1.1)
    let inputs = steps(0, 3, count: 300)
    body += limiter.axes(
        title: "Soft limiter after mixing", xLabel: "summed sample", yLabel: "output",
        xTicks: [0, 1, 2, 3], yTicks: [0, 0.5, 0.9, 1])
    body += limiter.line(inputs.map { ($0, Swift.min($0, 1)) }, color: grey, dashed: true)
    body += limiter.line(inputs.map { ($0, SoftLimiter.standard($0)) }, color: blue)
    body += limiter.legend([("soft, knee 0.9", blue), ("hard clip", grey)])
    return document(width: 760, height: 330, body)
}

/// Transients at three sharpnesses, at 48 kHz (line) and 3 kHz (dots).
func burstFigure() -> String {
    var body = ""
    for (row, sharpness) in [0.0, 0.5, 1.0].enumerated() {
        let top = 30 + 125 * Double(row)
        let panel = Panel(left: 60, top: top, width: 560, height: 85, xRange: 0...50, yRange: -1.1...1.1)
        let pattern = HapticPattern(
            events: [
                HapticEvent(
                    type: .hapticTransient,
                    parameters: [
                        HapticEventParameter(parameterID: .hapticIntensity, value: 1),
                        HapticEventParameter(parameterID: .hapticSharpness, value: sharpness),
                    ], relativeTime: 0.005)
            ], parameters: [])
        let hertz = SharpnessFrequencyMap.voiceCoil.frequency(sharpness: sharpness)
        body += panel.axes(
            title: "Transient, sharpness \(label(sharpness)): \(label((hertz * 10).rounded() / 10)) Hz, 2 cycles",
            xLabel: row == 2 ? "ms" : "", yLabel: "", xTicks: steps(0, 50, count: 5), yTicks: [-1, 0, 1])
        for (rate, isLine) in [(48_000.0, true), (3_000.0, false)] {
            let frames = WaveformRenderer(pattern: pattern, sampleRate: rate).render(from: 0, count: Int(0.05 * rate))
            let points = frames.left.enumerated().map { (1000 * Double($0.offset) / rate, $0.element) }
            body += isLine ? panel.line(points, color: blue, width: 1) : panel.dots(points, color: orange)
        }
    }
    body += "<text x=\"400\" y=\"20\" font-size=\"11\">line: 48 kHz (USB); dots: 3 kHz (Bluetooth)</text>\n"
    return document(width: 640, height: 420, body)
}

/// `capacitor_charge`: the 3 kHz waveform under the motor renderer's intensity envelope, and the carrier
/// frequency measured from its zero crossings (at 48 kHz) against the map of the pattern's sharpness.
func chargeFigure(_ pattern: HapticPattern) -> String {
    let end = 1.1
    let wave = Panel(left: 60, top: 30, width: 620, height: 170, xRange: 0...end, yRange: -1.1...1.1)
    var body = wave.axes(
        title: "capacitor_charge.ahap: left actuator at 3 kHz", xLabel: "",
        yLabel: "sample", xTicks: steps(0, 1, count: 5), yTicks: [-1, 0, 1])
    let bluetooth = WaveformRenderer(pattern: pattern, sampleRate: 3000).render(from: 0, count: Int(end * 3000))
    body += wave.line(
        bluetooth.left.enumerated().map { (Double($0.offset) / 3000, $0.element) }, color: blue, width: 0.6)
    let envelope = PatternRenderer().intensityEnvelope(pattern)
    let times = steps(0, end, count: 440)
    body += wave.line(times.map { ($0, envelope.levels(at: $0).strong) }, color: orange, dashed: true)
    body += wave.legend([("waveform", blue), ("intensity envelope (motor renderer)", orange)])

    let frequency = Panel(left: 60, top: 250, width: 620, height: 150, xRange: 0...end, yRange: 0...320)
    body += frequency.axes(
        title: "Carrier frequency (48 kHz render): measured and mapped",
        xLabel: "s", yLabel: "Hz", xTicks: steps(0, 1, count: 5), yTicks: [0, 50, 100, 200, 300])
    let rate = 48_000.0
    let usb = WaveformRenderer(pattern: pattern, sampleRate: rate).render(from: 0, count: Int(end * rate)).left
    var crossings: [Double] = []
    for index in usb.indices.dropFirst() where usb[index - 1] <= 0 && usb[index] > 0 {
        let fraction = -usb[index - 1] / (usb[index] - usb[index - 1])
        crossings.append((Double(index - 1) + fraction) / rate)
    }
    let measured = zip(crossings, crossings.dropFirst()).map { (($0 + $1) / 2, 1 / ($1 - $0)) }
    body += frequency.dots(measured, color: blue)
    let controls = PatternControls(pattern: pattern)
    if let event = pattern.hapticEvents.first {
        let mapped = steps(0, event.effectiveDuration, count: 200).map {
            ($0, SharpnessFrequencyMap.voiceCoil.frequency(sharpness: controls.sharpness(of: event, at: $0)))
        }
        body += frequency.line(mapped, color: orange, dashed: true)
    }
    body += frequency.legend([("measured", blue), ("map of sharpness", orange)])
    return document(width: 700, height: 440, body)
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: waveform-figures HAPTICS_FOLDER OUTPUT_FOLDER\n".utf8))
    exit(2)
}
do {
    let charge = try HapticPattern(contentsOf: URL(fileURLWithPath: arguments[1] + "/capacitor_charge.ahap"))
    let figures = [
        ("waveform-sharpness-frequency.svg", mapFigure()), ("waveform-amplitude-limiter.svg", amplitudeFigure()),
        ("waveform-transients.svg", burstFigure()), ("waveform-capacitor-charge.svg", chargeFigure(charge)),
    ]
    for (name, svg) in figures {
        let path = arguments[2] + "/" + name
        try svg.write(toFile: path, atomically: true, encoding: .utf8)
        print(path)
    }
} catch {
    FileHandle.standardError.write(Data("waveform-figures: \(error)\n".utf8))
    exit(1)
}
