// A player's pattern, rendered: the renderer (HapticRendering) turns a pattern plus its run-time controls into
// a MotorTimeline; the engine renders again when a player receives parameters or a curve.
import AHAP
import HapticRendering

struct PatternSource: Sendable {
    let pattern: HapticPattern
    let renderer: PatternRenderer

    func render(_ controls: RuntimeControls) -> MotorTimeline { renderer.render(pattern, controls: controls) }
}
