//! When the CLIs go on after a hook: when it exits, not when its output ends. A hook that
//! closes stdout and stderr at once and then keeps running holds the tool call until it exits,
//! which is why `tollgate hook` stops the hooks it detached (Claude Code's `async` ones) before
//! it exits instead of waiting for them (docs/hook-bridge.md).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::json;
use tollgate_standins::{Script, anthropic, openai};

use crate::claude_code::claude;
use crate::codex::{codex, codex_home};
use crate::support::{Scene, context};

/// The model's command: says whether the hook had exited when the call ran, then tells the
/// hook it ran. The check comes first, so a CLI that ran the call at the hook's end of output
/// sees no `hook-exited` (the hook writes it only after `call-ran`, or after 5 s without).
const PROBE: &str = "if [ -e hook-exited ]; then echo after-the-hook-exited; \
                     else echo before-the-hook-exited; fi; touch call-ran";

/// The hook: closes its output, waits (at most 5 s) for the call to run, then marks its exit.
fn write_hook(path: &Path, project: &Path) {
    let project = project.display();
    let script = format!(
        "#!/bin/bash\ncat >/dev/null\nexec >&- 2>&-\n\
         for _ in $(seq 100); do [ -e '{project}/call-ran' ] && break; sleep 0.05; done\n\
         touch '{project}/hook-exited'\nexit 0\n"
    );
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, script).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn claude_code_goes_on_when_its_hook_exits_not_when_its_output_ends() {
    let scene = Scene::new();
    let hook = scene.project.join(".claude/hooks/lingers.sh");
    write_hook(&hook, &scene.project);
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
        "hooks": [{"type": "command", "command": hook}]}]}});
    std::fs::write(
        scene.project.join(".claude/settings.json"),
        settings.to_string(),
    )
    .unwrap();
    let api = anthropic::start(Script::new().shell(PROBE).echo_tool_result()).unwrap();

    let output = claude(&scene, &api);

    let requests = api.requests();
    let context = context(&output, &requests);
    assert!(output.status.success(), "{context}");
    let results = anthropic::tool_results(&requests);
    assert_eq!(results.len(), 1, "{context}");
    assert_eq!(results[0].text.trim(), "after-the-hook-exited", "{context}");
}

#[test]
fn codex_goes_on_when_its_hook_exits_not_when_its_output_ends() {
    let scene = Scene::new();
    let hook = codex_home(&scene).join("hooks/lingers.sh");
    write_hook(&hook, &scene.project);
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
        "hooks": [{"type": "command", "command": hook, "timeout": 30}]}]}});
    std::fs::write(codex_home(&scene).join("hooks.json"), hooks.to_string()).unwrap();
    let api = openai::start(Script::new().shell(PROBE).echo_tool_result()).unwrap();

    let output = codex(&scene, &api);

    let requests = api.requests();
    let context = context(&output, &requests);
    assert!(output.status.success(), "{context}");
    let outputs = openai::tool_outputs(&requests);
    assert_eq!(outputs.len(), 1, "{context}");
    assert!(
        outputs[0].text.contains("after-the-hook-exited"),
        "{context}"
    );
}
