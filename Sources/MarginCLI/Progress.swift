import Foundation
import MarginCore
import MarginKit

/// A one-line progress bar on stderr, shown only on a terminal and never with --quiet or --json.
struct ProgressBar: Sendable {
    let label: String
    let enabled: Bool

    init(label: String, global: GlobalOptions) {
        self.label = label
        enabled = Console.stderrIsTTY && !global.quiet && !global.json
    }

    /// A callback for (done, total).
    var callback: (@Sendable (Int, Int) -> Void)? {
        guard enabled else { return nil }
        let label = self.label
        return { done, total in
            let width = 30
            let filled = total > 0 ? width * done / total : width
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            let percent = total > 0 ? 100 * done / total : 100
            Console.write("\r\(label) \(bar) \(done)/\(total) \(percent)%\u{1B}[K", to: STDERR_FILENO)
            if done == total { Console.write("\n", to: STDERR_FILENO) }
        }
    }
}

/// Pages read by OCR: a bar with pages, pages a second and the time left, on stderr (a terminal
/// only, never with --quiet or --json).
struct RecognitionBar: Sendable {
    let enabled: Bool

    init(global: GlobalOptions) { enabled = Console.stderrIsTTY && !global.quiet && !global.json }

    var callback: (@Sendable (RecognitionProgress) -> Void)? {
        guard enabled else { return nil }
        return { progress in
            let width = 24
            let total = max(progress.total, 1)
            let filled = width * progress.done / total
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            let seconds = Date().timeIntervalSince(progress.started)
            let rate = seconds > 0 ? Double(progress.done) / seconds : 0
            let left = rate > 0 ? Int(Double(progress.total - progress.done) / rate) : nil
            let eta = left.map { String(format: "%d:%02d left", $0 / 60, $0 % 60) } ?? ""
            let title = Console.truncated(terminalSafe(progress.book.title), to: 24)
            Console.write(
                "\r\(title) \(bar) \(progress.done)/\(progress.total) pages, \(String(format: "%.2f", rate)) pages/s \(eta)\u{1B}[K",
                to: STDERR_FILENO)
            if progress.done == progress.total { Console.write("\n", to: STDERR_FILENO) }
        }
    }
}

/// Live progress bars on stderr, one per active download: bytes, percent, rate, ETA. Only on a
/// terminal, and never with --quiet or --json.
final class TerminalDownloadProgress: DownloadProgress, @unchecked Sendable {
    private struct Transfer {
        var name: String
        var total: Int64?
        var received: Int64
        var resumedAt: Int64
        var started: Date
    }

    private let lock = NSLock()
    private var transfers: [(url: String, transfer: Transfer)] = []
    private var drawnLines = 0
    private var lastDraw = Date.distantPast

    /// Bars are drawn only on a terminal; retry notes are said anywhere.
    private let bars: Bool

    private init(bars: Bool) {
        self.bars = bars
    }

    /// A reporter unless the user wants no chatter (--quiet); bars only when stderr is a
    /// terminal and stdout isn't JSON.
    static func make(_ global: GlobalOptions) -> TerminalDownloadProgress? {
        global.quiet ? nil : TerminalDownloadProgress(bars: Console.stderrIsTTY && !global.json)
    }

    func retrying(_ url: String, attempt: Int, of attempts: Int, after delay: Double, reason: String) {
        // The reason may name the address too ("the server answered 503 for URL"): once is enough.
        let shown = redactedURL(url)
        let reason = reason.replacingAll(" for \(shown)", with: "").replacingAll(" for \(url)", with: "")
        let note =
            "note: \(shown): \(reason); trying again in \(String(format: "%.1f", delay)) s (attempt \(attempt) of \(attempts))"
        lock.lock()
        defer { lock.unlock() }
        if bars && drawnLines > 0 {
            // Above the bars, which are drawn again below it.
            Console.write("\u{1B}[\(drawnLines)F\u{1B}[J" + terminalSafe(note) + "\n", to: STDERR_FILENO)
            drawnLines = 0
        } else {
            Console.error(note)
        }
    }

    func started(_ url: String, total: Int64?, resumedAt: Int64) {
        let name = URL(string: url)?.lastPathComponent ?? url
        update {
            transfers.removeAll { $0.url == url }
            transfers.append(
                (url, Transfer(name: name, total: total, received: resumedAt, resumedAt: resumedAt, started: Date())))
        }
    }

    func received(_ url: String, bytes: Int64) {
        update(force: false) {
            if let index = transfers.firstIndex(where: { $0.url == url }) { transfers[index].transfer.received = bytes }
        }
    }

    func finished(_ url: String) {
        update { transfers.removeAll { $0.url == url } }
    }

    private func update(force: Bool = true, _ change: () -> Void) {
        lock.lock()
        defer { lock.unlock() }
        change()
        guard bars else { return }
        let now = Date()
        guard force || now.timeIntervalSince(lastDraw) > 0.1 else { return }
        lastDraw = now
        var output = drawnLines > 0 ? "\u{1B}[\(drawnLines)F" : ""
        for (_, transfer) in transfers {
            output += "\u{1B}[2K" + line(transfer, now: now) + "\n"
        }
        if transfers.count < drawnLines {
            output += String(repeating: "\u{1B}[2K\n", count: drawnLines - transfers.count)
            output += "\u{1B}[\(drawnLines - transfers.count)F"
        }
        drawnLines = transfers.count
        Console.write(output, to: STDERR_FILENO)
    }

    private func line(_ t: Transfer, now: Date) -> String {
        let elapsed = max(now.timeIntervalSince(t.started), 0.001)
        let rate = Double(t.received - t.resumedAt) / elapsed
        let safe = terminalSafe(t.name)
        let name =
            safe.count > 24 ? String(safe.prefix(23)) + "…" : padded(safe, 24)
        guard let total = t.total, total > 0 else {
            return "\(name) \(formatBytes(t.received))  \(formatBytes(Int64(rate)))/s"
        }
        let fraction = min(1, Double(t.received) / Double(total))
        let width = 24
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let eta = rate > 0 ? Int(Double(total - t.received) / rate) : 0
        return
            "\(name) \(bar) \(Int(fraction * 100))%  \(formatBytes(t.received))/\(formatBytes(total))  \(formatBytes(Int64(rate)))/s  ETA \(eta)s"
    }
}

/// Ctrl-C during a download: partial files stay (with their validators) for the next run.
func installInterruptHandler(
    _ global: GlobalOptions, saying kept: String = "partial downloads are kept: run the same command again to resume"
) {
    signal(SIGINT, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    source.setEventHandler {
        Console.error("\nerror: interrupted; \(kept)")
        Interruption.exit(130)
    }
    source.resume()
    InterruptSource.shared.keep(source)
}

private final class InterruptSource: @unchecked Sendable {
    static let shared = InterruptSource()
    private var sources: [any DispatchSourceSignal] = []
    private let lock = NSLock()

    func keep(_ source: any DispatchSourceSignal) {
        lock.lock()
        sources.append(source)
        lock.unlock()
    }
}
