from helpers.files import VariablesPlugin


class ReviewerVars(VariablesPlugin):
    def get_variables(self, file, backup_dirs=None, **kwargs):
        return {"workdir_path": "/never/used"}
