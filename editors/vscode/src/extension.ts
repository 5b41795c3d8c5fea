// Starts `trajcheck lsp` for .rules and .suite files and restarts it when its settings change.
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions, TransportKind } from "vscode-languageclient/node";

let client: LanguageClient | undefined;

function serverOptions(): ServerOptions {
  const config = vscode.workspace.getConfiguration("trajcheck");
  const command = config.get<string>("path", "trajcheck") || "trajcheck";
  const debounce = config.get<number>("debounceMs", 200);
  return { command, args: ["lsp", "--debounce-ms", String(Math.max(0, Math.round(debounce)))], transport: TransportKind.stdio };
}

function clientOptions(): LanguageClientOptions {
  const config = vscode.workspace.getConfiguration("trajcheck");
  return {
    documentSelector: [
      { scheme: "file", language: "trajcheck-rules" },
      { scheme: "file", language: "trajcheck-suite" },
      { scheme: "untitled", language: "trajcheck-rules" },
      { scheme: "untitled", language: "trajcheck-suite" },
    ],
    initializationOptions: {
      traces: config.get<string[]>("traces", []),
      catalog: config.get<string>("catalog", ""),
    },
  };
}

async function start(): Promise<void> {
  client = new LanguageClient("trajcheck", "trajcheck language server", serverOptions(), clientOptions());
  await client.start();
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (!e.affectsConfiguration("trajcheck")) return;
      await client?.stop();
      await start();
    }),
    vscode.commands.registerCommand("trajcheck.restartServer", async () => {
      await client?.stop();
      await start();
    }),
  );
  try {
    await start();
  } catch (err) {
    void vscode.window.showErrorMessage(
      `trajcheck: cannot start the language server (${String(err)}). Set "trajcheck.path" to the trajcheck executable.`,
    );
  }
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
