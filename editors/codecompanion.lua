-- Neovim, CodeCompanion (which speaks ACP): Zero as the chat agent.
-- Zero reads its model from the environment (ZERO_MODEL, OPENAI_API_KEY,
-- OPENAI_BASE_URL) or ~/.config/zero/config.yaml.
require("codecompanion").setup({
  adapters = {
    acp = {
      zero = function()
        return require("codecompanion.adapters").extend("gemini_cli", {
          name = "zero",
          formatted_name = "Zero",
          commands = { default = { "zero", "acp" } },
        })
      end,
    },
  },
  interactions = { chat = { adapter = "zero" } },
})
