/// Where the harness's own companions live.
public enum HarnessFiles {
    /// The harness's fixtures (`Packages/Harness/Fixtures`): the GTK programs its compositors'
    /// windows run (`gtk_app.py`, a GApplication; `gtk_window.py`, a window).
    public static let fixtures: String = {
        let file = "\(#filePath)"
        let sources = file[..<(file.lastIndex(of: "/") ?? file.endIndex)]
        return String(sources) + "/../../Fixtures"
    }()
}
