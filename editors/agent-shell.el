;;; zero-agent-shell.el --- Zero as an agent-shell agent -*- lexical-binding: t; -*-
;; Emacs, agent-shell (which speaks ACP): M-x zero-agent-shell starts Zero
;; on the current project. Zero reads its model from the environment
;; (ZERO_MODEL, OPENAI_API_KEY, OPENAI_BASE_URL) or ~/.config/zero/config.yaml.
(require 'agent-shell)

(defvar zero-agent-shell-command '("zero" "acp")
  "The command that starts Zero's ACP server, and its arguments.")

(defun zero-agent-shell-config ()
  "An agent-shell configuration for Zero."
  (agent-shell-make-agent-config
   :identifier 'zero
   :mode-line-name "Zero"
   :buffer-name "Zero"
   :shell-prompt "Zero> "
   :shell-prompt-regexp "Zero> "
   :client-maker (lambda (buffer)
                   (agent-shell--make-acp-client
                    :command (car zero-agent-shell-command)
                    :command-params (cdr zero-agent-shell-command)
                    :context-buffer buffer))))

(defun zero-agent-shell ()
  "Start Zero in an agent-shell buffer."
  (interactive)
  (agent-shell--dwim :config (zero-agent-shell-config) :new-shell t))

(provide 'zero-agent-shell)
;;; zero-agent-shell.el ends here
